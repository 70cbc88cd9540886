/* CWE-122 / CWE-193: for (i = 0; i <= n; i++) over an int array of n elements. */
#include <stdlib.h>
#include "rc.h"
static void bad(void)
{
    size_t n = rc_n(10);
    int *a = malloc(n * sizeof *a);
    for (size_t i = 0; i <= n; i++) a[i] = (int)i; /* BAD */
    rc_sum(a, n * sizeof *a);
    free(a);
}
static void good(void)
{
    size_t n = rc_n(10);
    int *a = malloc(n * sizeof *a);
    for (size_t i = 0; i < n; i++) a[i] = (int)i;
    rc_sum(a, n * sizeof *a);
    free(a);
}
RC_MAIN
