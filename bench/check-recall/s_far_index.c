/* CWE-121 / CWE-129: a local array indexed by a value checked only against 0, gigabytes past it; the fake
 * stack frames (stack use after return) must not take the store silently. */
#include "rc.h"
static void run(size_t k)
{
    int buf[10];
    for (int i = 0; i < 10; i++) buf[i] = i;
    if ((long)k >= 0) buf[k] = 1; /* BAD: k is 1 << 30 */
    rc_sum(buf, sizeof buf);
}
static void bad(void) { run(rc_n((size_t)1 << 30)); }
static void good(void) { run(rc_n(9)); }
RC_MAIN
