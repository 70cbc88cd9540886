/* CWE-122: sprintf of two longs into an 8-byte heap block. */
#include <stdio.h>
#include <stdlib.h>
#include "rc.h"
static void run(size_t size)
{
    char *buf = malloc(rc_n(size));
    sprintf(buf, "%ld-%ld", (long)rc_n(123456), (long)rc_n(789012)); /* BAD when size is 8 */
    rc_sum(buf, 8);
    free(buf);
}
static void bad(void) { run(8); }
static void good(void) { run(16); }
RC_MAIN
