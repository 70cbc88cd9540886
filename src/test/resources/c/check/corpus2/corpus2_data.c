/* corpus2_data.c: data the cases of the second corpus share across translation units (global_extern_table). */
int limits[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
int limits_checksum = 55;
