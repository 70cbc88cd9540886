/* CWE-416: memset of a freed block (a "secure wipe" placed after the free). */
#include <stdlib.h>
#include <string.h>
#include "rc.h"
static void run(int bad)
{
    char *secret = malloc(rc_n(32));
    memset(secret, 's', 32);
    rc_sum(secret, 32);
    if (bad) free(secret);
    memset(secret, 0, 32); /* BAD */
    if (!bad) free(secret);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
