/* CWE-416: a growable array whose cursor was taken before append() reallocated it; the write goes to the old
 * block. Twin: the cursor is taken again after the append. */
#include <stdlib.h>
#include "corpus.h"

struct vec { int *data; size_t len, cap; };

static void append(struct vec *v, int x)
{
    if (v->len == v->cap) {
        v->cap *= 2;
        v->data = realloc(v->data, v->cap * sizeof *v->data);
    }
    v->data[v->len++] = x;
}

static void run(int refresh)
{
    struct vec v = { malloc(4 * sizeof(int)), 0, 4 };
    for (int i = 0; i < 4; i++) append(&v, i);
    int *last = &v.data[3];
    append(&v, 4);
    if (refresh) last = &v.data[3];
    *last = 33; /* BAD */
    print_bytes(v.data, v.len * sizeof(int));
    free(v.data);
}

void uaf_realloc_cached_bad(void) { run((int)opaque(0)); }
void uaf_realloc_cached_good(void) { run((int)opaque(1)); }
