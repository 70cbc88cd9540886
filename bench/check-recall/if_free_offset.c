/* CWE-761: free of a pointer advanced past a header (p + 8) instead of the block's start. */
#include <stdlib.h>
#include "rc.h"
static void run(int bad)
{
    char *block = calloc(rc_n(4), 16);
    char *payload = block + 8;
    payload[0] = 'p';
    rc_sum(block, 64);
    free(bad ? payload : block); /* BAD: the middle of a block */
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
