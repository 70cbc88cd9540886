/* CWE-124: a store 8 bytes before a posix_memalign block. */
#include <stdlib.h>
#include "rc.h"
static void run(long at)
{
    long *p;
    if (posix_memalign((void **)&p, 32, rc_n(10 * sizeof(long))) != 0) return;
    for (int i = 0; i < 10; i++) p[i] = i;
    p[at] = 42; /* BAD when at is -1 */
    rc_sum(p, 10 * sizeof(long));
    free(p);
}
static void bad(void) { run((long)rc_n((size_t)-1)); }
static void good(void) { run((long)rc_n(0)); }
RC_MAIN
