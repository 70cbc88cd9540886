/* CWE-124: a store one element before an alloca'ed int array. */
#include <alloca.h>
#include "rc.h"
static void run(long at)
{
    size_t n = rc_n(12);
    int *a = alloca(n * sizeof *a);
    for (size_t i = 0; i < n; i++) a[i] = 1;
    a[at] = 7; /* BAD when at is -1 */
    rc_sum(a, n * sizeof *a);
}
static void bad(void) { run((long)rc_n((size_t)-1)); }
static void good(void) { run((long)rc_n(0)); }
RC_MAIN
