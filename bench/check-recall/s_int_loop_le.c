/* CWE-121 / CWE-193: for (i = 0; i <= 10; i++) over int a[10]. */
#include "rc.h"
static void run(size_t last)
{
    int a[10];
    for (size_t i = 0; i <= rc_n(last); i++) a[i] = (int)(i * 3); /* BAD when last is 10 */
    rc_sum(a, sizeof a);
}
static void bad(void) { run(10); }
static void good(void) { run(9); }
RC_MAIN
