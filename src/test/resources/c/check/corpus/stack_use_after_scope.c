/* A pointer to a block-scoped array kept past its block and read there. Twin: read inside the block. */
#include "corpus.h"

static void scope(int bad)
{
    int *p;
    long v = 0;
    {
        int inner[8];
        for (int i = 0; i < 8; i++) inner[i] = i;
        p = opaque_ptr(inner);
        if (!bad) v = p[3];
    }
    if (bad) v = p[3]; /* BAD */
    print_int(v);
}

void stack_use_after_scope_bad(void) { scope((int)opaque(1)); }
void stack_use_after_scope_good(void) { scope((int)opaque(0)); }
