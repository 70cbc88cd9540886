/* CWE-401: bad forgets the only pointer; good keeps it in a global (still reachable at exit: not a leak,
 * as LeakSanitizer and memcheck's "definitely lost" define it). */
#include <stdlib.h>
#include <string.h>
#include "rc.h"
static void run(int bad)
{
    char *cache = malloc(rc_n(256));
    memset(cache, 'c', 256);
    rc_keep(cache);
    rc_sum(cache, 256);
    if (bad) rc_drop(); /* BAD: the block is now unreachable */
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
