/* CWE-121 (CWE-193): a loop over a stack array of 8 records with <= instead of <, a 12-byte record each. */
#include "corpus.h"

struct rec { int id; short kind; short flags; int weight; };

static void init(size_t last)
{
    struct rec table[8];
    for (size_t i = 0; i <= last; i++) {
        table[i].id = (int)i; /* BAD */
        table[i].kind = 1;
        table[i].flags = 0;
        table[i].weight = (int)(i * 3);
    }
    print_bytes(table, sizeof table);
}

void stack_struct_array_le_bad(void) { init(opaque(8)); }
void stack_struct_array_le_good(void) { init(opaque(7)); }
