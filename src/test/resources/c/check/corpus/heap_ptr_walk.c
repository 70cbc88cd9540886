/* CWE-122: a pointer walks a malloc'd buffer up to and including its end pointer. Twin: stops before it. */
#include <stdlib.h>
#include "corpus.h"

void heap_ptr_walk_bad(void)
{
    size_t n = opaque(50);
    char *data = malloc(n), *end = data + n;
    for (char *p = data; p <= end; p++) *p = 'A'; /* BAD */
    print_bytes(data, n);
    free(data);
}

void heap_ptr_walk_good(void)
{
    size_t n = opaque(50);
    char *data = malloc(n), *end = data + n;
    for (char *p = data; p < end; p++) *p = 'A';
    print_bytes(data, n);
    free(data);
}
