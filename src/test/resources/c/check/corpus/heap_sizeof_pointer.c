/* CWE-131 into CWE-122: malloc(10) for ten ints (the count, not the bytes), filled as ten ints. */
#include <stdlib.h>
#include "corpus.h"

static void fill(size_t bytes)
{
    int *data = malloc(bytes);
    for (size_t i = 0; i < 10; i++) data[i] = 0; /* BAD */
    print_bytes(data, bytes);
    free(data);
}

void heap_sizeof_pointer_bad(void) { fill(opaque(10)); }
void heap_sizeof_pointer_good(void) { fill(opaque(10 * sizeof(int))); }
