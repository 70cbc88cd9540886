/* CWE-122: a block shrunk by realloc, still written to its old size. */
#include <stdlib.h>
#include <string.h>
#include "rc.h"
static void run(size_t newsize)
{
    char *p = malloc(rc_n(64));
    p = realloc(p, rc_n(newsize));
    memset(p, 'r', 48); /* BAD when newsize is 32 */
    rc_sum(p, 32);
    free(p);
}
static void bad(void) { run(32); }
static void good(void) { run(48); }
RC_MAIN
