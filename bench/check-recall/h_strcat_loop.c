/* CWE-122: strcat in a loop, one word too many for a 20-byte heap block. */
#include <stdlib.h>
#include <string.h>
#include "rc.h"
static void run(int words)
{
    char *buf = malloc(rc_n(20));
    buf[0] = 0;
    for (int i = 0; i < words; i++) strcat(buf, "word "); /* BAD at the 4th word */
    rc_sum(buf, strlen(buf));
    free(buf);
}
static void bad(void) { run(4); }
static void good(void) { run(3); }
RC_MAIN
