/* CWE-127: memmove from 4 bytes before a heap block (a window start computed one step too early). */
#include <stdlib.h>
#include <string.h>
#include "rc.h"
static void run(size_t start)
{
    char *p = malloc(rc_n(32));
    memset(p, 'm', 32);
    char out[16];
    memmove(out, p + start - 4, 16); /* BAD when start is 0 */
    rc_sum(out, 16);
    free(p);
}
static void bad(void) { run(rc_n(0)); }
static void good(void) { run(rc_n(4)); }
RC_MAIN
