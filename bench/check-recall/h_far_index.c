/* CWE-122 / CWE-129: an index with only its lower bound checked, from a random-like source (Juliet's
 * CWE129_rand): gigabytes past the block. Natively and under ASan it faults in unmapped memory; the checker's
 * arena must not take the store silently. */
#include <stdlib.h>
#include "rc.h"
static void run(size_t k)
{
    int *a = malloc(rc_n(10) * sizeof *a);
    for (int i = 0; i < 10; i++) a[i] = i;
    if ((long)k >= 0) a[k] = 1; /* BAD: k is 1 << 30 */
    rc_sum(a, 10 * sizeof *a);
    free(a);
}
static void bad(void) { run(rc_n((size_t)1 << 30)); }
static void good(void) { run(rc_n(9)); }
RC_MAIN
