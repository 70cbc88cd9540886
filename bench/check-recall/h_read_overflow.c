/* CWE-122: read() of 48 bytes from a pipe into a 32-byte heap block. */
#include <stdlib.h>
#include <unistd.h>
#include "rc.h"
static void run(size_t size)
{
    int fd = rc_pipe(48);
    char *buf = malloc(rc_n(size));
    ssize_t got = read(fd, buf, 48); /* BAD when size is 32 */
    rc_int(got);
    rc_sum(buf, 32);
    close(fd);
    free(buf);
}
static void bad(void) { run(32); }
static void good(void) { run(48); }
RC_MAIN
