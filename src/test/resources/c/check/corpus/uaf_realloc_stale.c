/* CWE-416: a pointer saved before realloc grew (and moved) the block, read afterwards. Twin: re-taken. */
#include <stdlib.h>
#include "corpus.h"

static void grow(int bad)
{
    int *data = malloc(4 * sizeof *data);
    for (int i = 0; i < 4; i++) data[i] = i;
    int *first = data;
    data = realloc(data, 4096 * sizeof *data);
    if (!bad) first = data;
    print_int(first[1]); /* BAD */
    free(data);
}

void uaf_realloc_stale_bad(void) { grow((int)opaque(1)); }
void uaf_realloc_stale_good(void) { grow((int)opaque(0)); }
