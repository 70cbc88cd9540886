/* A shared library with a global counter and a table lookup, for -fPIC -shared instrumentation. */
static int counts[16];
int total;

int rw_lib_bump(int k) { counts[k & 15]++; total += k; return counts[k & 15]; }
