/* CWE-121 on a global: a loop writes one int past a file-scope array of ten. Twin: i < 10. */
#include "corpus.h"

int global_counts[10];

static void fill(size_t last)
{
    for (size_t i = 0; i <= last; i++) global_counts[i] = (int)i; /* BAD */
    print_bytes(global_counts, sizeof global_counts);
}

void global_loop_overflow_bad(void) { fill(opaque(10)); }
void global_loop_overflow_good(void) { fill(opaque(9)); }
