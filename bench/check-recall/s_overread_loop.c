/* CWE-126: a sum over n + 1 elements of an 8-element stack array. */
#include "rc.h"
static void run(size_t n)
{
    long a[8];
    for (int i = 0; i < 8; i++) a[i] = i;
    long sum = 0;
    for (size_t i = 0; i < rc_n(n); i++) sum += a[i]; /* BAD when n is 9 */
    rc_int(sum);
}
static void bad(void) { run(9); }
static void good(void) { run(8); }
RC_MAIN
