/* CWE-121: a variable-length array of n ints written at index n. Twin: n - 1. */
#include "corpus.h"

static void fill(size_t n, size_t at)
{
    int vla[n];
    for (size_t i = 0; i < n; i++) vla[i] = 0;
    vla[at] = 7; /* BAD */
    print_bytes(vla, n * sizeof(int));
}

void stack_vla_overflow_bad(void) { fill(opaque(12), opaque(12)); }
void stack_vla_overflow_good(void) { fill(opaque(12), opaque(11)); }
