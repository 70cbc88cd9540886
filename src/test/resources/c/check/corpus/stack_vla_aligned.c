/* CWE-121: a VLA of 8 ints (32 bytes, a multiple of gcc's alloca alignment) filled by an inclusive bound. */
#include "corpus.h"

static void fill(size_t n, size_t last)
{
    int vla[n];
    for (size_t i = 0; i <= last; i++) vla[i] = (int)i; /* BAD */
    print_bytes(vla, n * sizeof(int));
}

void stack_vla_aligned_bad(void) { fill(opaque(8), opaque(8)); }
void stack_vla_aligned_good(void) { fill(opaque(8), opaque(7)); }
