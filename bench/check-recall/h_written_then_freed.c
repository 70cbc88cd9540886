/* CWE-122 / CWE-193: a block written one byte too far and freed, never read: gcc -O2 deletes the stores
 * (dead before free) and then the malloc/free pair, and the bug with them (ASan -O2 reports nothing),
 * unless free is no builtin. */
#include <stdlib.h>
#include "rc.h"
static void bad(void)
{
    char *p = malloc(8);
    for (int i = 0; i <= 8; i++) p[i] = 'w'; /* BAD: p[8] */
    free(p);
    rc_int(8);
}
static void good(void)
{
    char *p = malloc(8);
    for (int i = 0; i < 8; i++) p[i] = 'w';
    free(p);
    rc_int(8);
}
RC_MAIN
