/* CWE-121: a loop runs past a struct's trailing array and out of the stack struct. */
#include "corpus.h"

typedef struct {
    int count;
    int values[8];
} record;

static void fill(size_t n)
{
    record r;
    r.count = (int)n;
    for (size_t i = 0; i < n; i++) r.values[i] = (int)i; /* BAD */
    print_bytes(&r, sizeof r);
}

void stack_struct_field_bad(void) { fill(opaque(9)); }
void stack_struct_field_good(void) { fill(opaque(8)); }
