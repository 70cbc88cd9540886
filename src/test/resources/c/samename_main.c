/*
 * Same-named statics (SameNamedObjectsTest): three objects called table, in file1.c, file2.c and a shared
 * library. At -O0 each touch is a load and a store of table[i] and a load to return it. file2.c's table,
 * at the higher address, is touched first (5 calls), then file1.c's (3), then the library's (7).
 */
int touch1(int), touch2(int), touch3(int);

int main(void) {
    int s = 0;
    for (int i = 0; i < 5; i++) s += touch2(i);
    for (int i = 0; i < 3; i++) s += touch1(i);
    for (int i = 0; i < 7; i++) s += touch3(i);
    return s == 0;
}
