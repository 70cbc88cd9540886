/* CWE-122 / CWE-193: a block written one byte too far and freed, never read: the shape whose stores gcc -O2
 * may delete (dead before free) with the malloc/free pair, and the bug with them, while free is a builtin
 * (Toyota ITC's buffer_overrun_dynamic: ASan -O2 finds 5 of 32; this file's build keeps the stores). */
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
