/* CWE-122: strncpy bounded by the source's length + 1 instead of the destination's size. */
#include <stdlib.h>
#include <string.h>
#include "rc.h"
static void run(size_t size)
{
    const char *src = rc_p((void *)"twenty-four characters!");
    char *dst = malloc(rc_n(size));
    strncpy(dst, src, strlen(src) + 1); /* BAD when size is 12 */
    rc_sum(dst, 12);
    free(dst);
}
static void bad(void) { run(12); }
static void good(void) { run(24); }
RC_MAIN
