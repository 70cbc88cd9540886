/* CWE-124 on a global: a store at index -1 of a file-scope int array (a ring buffer's head minus one). */
#include "rc.h"
int ring[8];
int counter = 5;
static void run(long head)
{
    ring[head - 1] = 7; /* BAD when head is 0 */
    rc_sum(ring, sizeof ring);
    rc_int(counter);
}
static void bad(void) { run((long)rc_n(0)); }
static void good(void) { run((long)rc_n(1)); }
RC_MAIN
