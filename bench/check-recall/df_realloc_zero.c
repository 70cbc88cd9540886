/* CWE-415: realloc(p, 0) frees p (glibc) and the caller frees it again. */
#include <stdlib.h>
#include "rc.h"
static void run(int bad)
{
    char *p = malloc(rc_n(24));
    p[0] = 1;
    char *q = realloc(p, rc_n(bad ? 0 : 8));
    if (bad) free(p); /* BAD: realloc(p, 0) already freed it */
    else free(q);
    rc_int(0);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
