// CWE-122 (C++): a loop writes n + 1 doubles into new double[n].
#include "rc.h"
static void run(size_t extra)
{
    size_t n = rc_n(6);
    double *d = new double[n];
    for (size_t i = 0; i < n + extra; i++) d[i] = 0.5 * (double)i; // BAD when extra is 1
    rc_sum(d, n * sizeof *d);
    delete[] d;
}
static void bad(void) { run(rc_n(1)); }
static void good(void) { run(rc_n(0)); }
RC_MAIN
