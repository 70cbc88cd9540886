// CWE-762 (C++): new int[] released with delete (not delete[]).
#include "rc.h"
static void run(int bad)
{
    int *a = new int[16];
    for (int i = 0; i < 16; i++) a[i] = i;
    rc_sum(a, 16 * sizeof(int));
    if (bad) delete a; // BAD
    else delete[] a;
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
