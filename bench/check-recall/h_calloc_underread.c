/* CWE-127: a read at index -1 of a calloc'ed int array (a search that walks one step too far back). */
#include <stdlib.h>
#include "rc.h"
static void run(long stop)
{
    size_t n = rc_n(8);
    int *a = calloc(n, sizeof *a);
    long sum = 0;
    for (long i = (long)n - 1; i >= stop; i--) sum += a[i]; /* BAD when stop is -1 */
    rc_int(sum);
    free(a);
}
static void bad(void) { run(-1); }
static void good(void) { run(0); }
RC_MAIN
