/* CWE-122 / CWE-806: snprintf told 64 bytes for a 16-byte heap block. */
#include <stdio.h>
#include <stdlib.h>
#include "rc.h"
static void run(size_t size)
{
    char *buf = malloc(rc_n(size));
    snprintf(buf, 64, "%s/%s", "directory-name", "file-name.txt"); /* BAD when size is 16 */
    rc_sum(buf, 16);
    free(buf);
}
static void bad(void) { run(16); }
static void good(void) { run(64); }
RC_MAIN
