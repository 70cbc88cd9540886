/* CWE-416: a connection's close callback frees the connection, and the dispatcher reads its state afterwards
 * (the pattern of many event-loop bugs). Twin: the state is read before the callback. */
#include <stdlib.h>
#include "corpus.h"

struct conn { int fd; int state; void (*on_close)(struct conn *); };

static void destroy(struct conn *c) { free(c); }

static void dispatch(int check_first)
{
    struct conn *c = malloc(sizeof *c);
    c->fd = 3;
    c->state = 2;
    c->on_close = destroy;
    int state = 0;
    if (check_first) state = c->state;
    c->on_close(opaque_ptr(c));
    if (!check_first) state = c->state; /* BAD */
    print_int(state);
}

void uaf_ctx_destroy_bad(void) { dispatch((int)opaque(0)); }
void uaf_ctx_destroy_good(void) { dispatch((int)opaque(1)); }
