/* CWE-121 (CWE-129): an index checked against >= 0 only, then written into a stack array of ten. */
#include "corpus.h"

static void put(int index)
{
    int buffer[10] = {0};
    if (index >= 0) buffer[index] = 1; /* BAD */
    print_bytes(buffer, sizeof buffer);
}

void stack_index_overflow_bad(void) { put((int)opaque(10)); }
void stack_index_overflow_good(void) { put((int)opaque(9)); }
