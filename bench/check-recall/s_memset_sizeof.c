/* CWE-121: memset of a stack array with the size of a larger one (a wrong sizeof). */
#include <string.h>
#include "rc.h"
struct wide { char b[40]; };
static void run(int bad)
{
    char buf[24];
    memset(buf, 0, rc_n(bad ? sizeof(struct wide) : sizeof buf)); /* BAD */
    rc_sum(buf, sizeof buf);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
