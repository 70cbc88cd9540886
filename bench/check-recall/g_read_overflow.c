/* CWE-121-like on a global (ITC "static buffer"): read() of 40 bytes into a 24-byte global array. */
#include <unistd.h>
#include "rc.h"
char gbuf[24];
char gafter[24];
static void run(size_t n)
{
    int fd = rc_pipe(40);
    ssize_t got = read(fd, gbuf, rc_n(n)); /* BAD when n is 40 */
    rc_int(got);
    rc_sum(gbuf, sizeof gbuf);
    rc_sum(gafter, sizeof gafter);
    close(fd);
}
static void bad(void) { run(40); }
static void good(void) { run(24); }
RC_MAIN
