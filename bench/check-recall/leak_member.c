/* CWE-401: a struct freed without its member block (the member is then unreachable). */
#include <stdlib.h>
#include <string.h>
#include "rc.h"
struct buffer { size_t len; char *data; };
static void run(int bad)
{
    struct buffer *b = malloc(sizeof *b);
    b->len = 100;
    b->data = malloc(rc_n(100));
    memset(b->data, 'd', 100);
    rc_sum(b->data, 100);
    if (!bad) free(b->data);
    free(b); /* BAD: b->data leaks */
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
