/* CWE-401: the only pointer to a block overwritten by the next allocation. */
#include <stdlib.h>
#include <string.h>
#include "rc.h"
static void run(int bad)
{
    char *p = malloc(rc_n(40));
    strcpy(p, "first");
    rc_sum(p, 5);
    if (!bad) free(p);
    p = malloc(rc_n(40)); /* BAD: the first block is lost */
    strcpy(p, "second");
    rc_sum(p, 6);
    free(p);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
