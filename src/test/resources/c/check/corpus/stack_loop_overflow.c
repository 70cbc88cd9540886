/* CWE-121: a loop writes one int past a stack array of ten (i <= 10). Twin: i < 10. */
#include "corpus.h"

static void fill(size_t last)
{
    int buffer[10];
    for (size_t i = 0; i <= last; i++) buffer[i] = (int)i; /* BAD */
    print_bytes(buffer, sizeof buffer);
}

void stack_loop_overflow_bad(void) { fill(opaque(10)); }
void stack_loop_overflow_good(void) { fill(opaque(9)); }
