/* Global overflow / CWE-193: for (i = 0; i <= N; i++) over a static short array of N elements. */
#include "rc.h"
#define N 20
static short hist[N];
static void run(size_t last)
{
    for (size_t i = 0; i <= rc_n(last); i++) hist[i]++; /* BAD when last is N */
    rc_sum(hist, sizeof hist);
}
static void bad(void) { run(N); }
static void good(void) { run(N - 1); }
RC_MAIN
