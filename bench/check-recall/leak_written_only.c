/* CWE-401: a block only written, never read or freed: gcc -O2 deletes the allocation (and the leak) while
 * malloc is a builtin. */
#include <stdlib.h>
#include "rc.h"
static void run(int bad)
{
    char *p = malloc(24);
    p[0] = 'x';
    if (!bad) free(p);
    rc_int(bad);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
