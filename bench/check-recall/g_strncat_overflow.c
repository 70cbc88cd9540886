/* Global overflow: strncat bounded by the source's size, not the room left in a 16-byte global. */
#include <string.h>
#include "rc.h"
char path[16] = "/usr/";
static void run(const char *more)
{
    strncat(path, more, strlen(more)); /* BAD when more is 11 characters or longer */
    rc_sum(path, strlen(path));
}
static void bad(void) { run(rc_p((void *)"local/share")); }
static void good(void) { run(rc_p((void *)"local/bin")); }
RC_MAIN
