/* CWE-126: memcpy reading 32 bytes from a 16-byte heap source into a large enough stack buffer. */
#include <stdlib.h>
#include <string.h>
#include "rc.h"
static void run(size_t n)
{
    char *src = malloc(rc_n(16));
    memset(src, 's', 16);
    char dst[32];
    memcpy(dst, src, rc_n(n)); /* BAD when n is 32 */
    rc_sum(dst, n);
    free(src);
}
static void bad(void) { run(32); }
static void good(void) { run(16); }
RC_MAIN
