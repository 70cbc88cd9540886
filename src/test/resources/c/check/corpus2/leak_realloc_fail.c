/* CWE-401: p = realloc(p, n) with a size the allocator cannot give: realloc returns NULL and the only pointer
 * to the block is lost. Twin: the result goes to a temporary and p is freed on failure. */
#include <stdlib.h>
#include "corpus.h"

static void grow(int careful)
{
    char *p = malloc(64);
    p[0] = 1;
    size_t huge = opaque((size_t)1 << 62);
    if (careful) {
        char *q = realloc(p, huge);
        if (!q) { free(p); print_line("no memory"); return; }
        p = q;
    } else {
        p = realloc(p, huge);
        if (!p) { print_line("no memory"); return; }
    }
    free(p);
}

void leak_realloc_fail_bad(void) { grow((int)opaque(0)); }
void leak_realloc_fail_good(void) { grow((int)opaque(1)); }
