/* CWE-122: realloc shrinks a 64-byte block to 16, then the old size is still used. Twin: the new size. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static void shrink(size_t used)
{
    char *data = malloc(64);
    memset(data, 'A', 64);
    data = realloc(data, 16);
    memset(data, 'B', used); /* BAD */
    print_bytes(data, 16);
    free(data);
}

void realloc_shrink_bad(void) { shrink(opaque(64)); }
void realloc_shrink_good(void) { shrink(opaque(16)); }
