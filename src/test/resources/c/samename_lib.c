/* Same-named statics (SameNamedObjectsTest): a shared library's own table. */
static int table[64];

int touch3(int i) {
    table[i] += 3;
    return table[i];
}
