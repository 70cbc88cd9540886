/* CWE-121: read() of 48 bytes from a pipe into a 32-byte stack array. */
#include <unistd.h>
#include "rc.h"
static void run(size_t n)
{
    int fd = rc_pipe(48);
    char buf[32];
    ssize_t got = read(fd, buf, rc_n(n)); /* BAD when n is 48 */
    rc_int(got);
    rc_sum(buf, 32);
    close(fd);
}
static void bad(void) { run(48); }
static void good(void) { run(32); }
RC_MAIN
