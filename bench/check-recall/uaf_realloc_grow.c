/* CWE-416: a pointer into a buffer kept across realloc (which moves it), written through afterwards. */
#include <stdlib.h>
#include <string.h>
#include "rc.h"
static void run(int bad)
{
    char *buf = malloc(rc_n(16));
    memset(buf, 'a', 16);
    char *cursor = buf + 8;
    char *grown = realloc(buf, rc_n(4096));   /* a different size class: the block moves */
    if (!bad) cursor = grown + 8;
    *cursor = 'Z'; /* BAD: cursor points into the old block */
    rc_sum(grown, 16);
    free(grown);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
