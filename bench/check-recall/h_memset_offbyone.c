/* CWE-122 / CWE-193: memset of n + 1 bytes over an n-byte block (off by one). */
#include <stdlib.h>
#include <string.h>
#include "rc.h"
static void run(size_t extra)
{
    size_t n = rc_n(37);
    char *p = malloc(n);
    memset(p, 'x', n + extra); /* BAD when extra is 1 */
    rc_sum(p, n);
    free(p);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
