/* Same-named statics (SameNamedObjectsTest): this file's table, linked below file2.c's. */
static int table[64];

int touch1(int i) {
    table[i] += 1;
    return table[i];
}
