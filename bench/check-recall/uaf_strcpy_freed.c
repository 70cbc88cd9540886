/* CWE-416: strcpy into a freed buffer (an error path that freed it, a later path that reuses it). */
#include <stdlib.h>
#include <string.h>
#include "rc.h"
static void run(int bad)
{
    char *msg = malloc(rc_n(32));
    strcpy(msg, "first");
    if (bad) free(msg);
    strcpy(msg, "second message"); /* BAD */
    rc_sum(msg, 6);
    if (!bad) free(msg);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
