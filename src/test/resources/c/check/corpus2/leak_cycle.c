/* CWE-401: two nodes that point to each other, the last outside pointer dropped: a lost cycle (LeakSanitizer
 * says indirect leaks, memcheck definitely + indirectly lost). Twin: the cycle is broken and both freed. */
#include <stdlib.h>
#include "corpus.h"

struct node { struct node *peer; long v; };

static void run(int bad)
{
    struct node *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    a->peer = b; a->v = 1;
    b->peer = a; b->v = 2;
    print_int(a->peer->v + b->peer->v);
    if (!bad) { free(a); free(b); }
    a = b = NULL;
    opaque_ptr(a);
}

void leak_cycle_bad(void) { run((int)opaque(1)); }
void leak_cycle_good(void) { run((int)opaque(0)); }
