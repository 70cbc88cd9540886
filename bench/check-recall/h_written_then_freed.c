/* CWE-122 / CWE-193: a block written one element too far and freed, never read: gcc -O2 deletes the stores
 * (dead before free) and then the malloc/free pair, and the bug with them, unless free is no builtin. */
#include <stdlib.h>
#include "rc.h"
static void bad(void)
{
    short *p = calloc(6, sizeof *p);
    for (int i = 0; i <= 6; i++) p[i] = 1; /* BAD: p[6] */
    free(p);
    rc_int(6);
}
static void good(void)
{
    short *p = calloc(6, sizeof *p);
    for (int i = 0; i < 6; i++) p[i] = 1;
    free(p);
    rc_int(6);
}
RC_MAIN
