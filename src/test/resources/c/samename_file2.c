/* Same-named statics (SameNamedObjectsTest): this file's table, linked above file1.c's. */
static int table[64];

int touch2(int i) {
    table[i] += 2;
    return table[i];
}
