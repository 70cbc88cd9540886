/* CWE-122 (CWE-131): calloc(n, sizeof(short)) filled as ints: the second half of the writes lands past the
 * block. Twin: sizeof(int). */
#include <stdlib.h>
#include "corpus.h"

static void fill(size_t n, size_t elem)
{
    int *v = calloc(n, elem);
    for (size_t i = 0; i < n; i++) v[i] = (int)i; /* BAD */
    print_bytes(v, n * elem);
    free(v);
}

void heap_calloc_elem_bad(void) { fill(opaque(16), opaque(sizeof(short))); }
void heap_calloc_elem_good(void) { fill(opaque(16), opaque(sizeof(int))); }
