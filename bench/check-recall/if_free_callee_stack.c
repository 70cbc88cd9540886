/* CWE-590: a helper frees a buffer its caller passed, which is the caller's stack array. */
#include <stdlib.h>
#include <string.h>
#include "rc.h"
static void consume(char *buf) { rc_sum(buf, 8); free(buf); /* BAD when buf is on the stack */ }
static void run(int bad)
{
    char local[8];
    char *buf = bad ? local : malloc(rc_n(8));
    memset(buf, 'c', 8);
    consume(buf);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
