/* CWE-127: an element read at index -1 of a stack array (a search that did not find returns -1). */
#include "corpus.h"

static int find(const int *a, int n, int v)
{
    for (int i = 0; i < n; i++) if (a[i] == v) return i;
    return -1;
}

static void lookup(int v)
{
    int table[16];
    for (int i = 0; i < 16; i++) table[i] = i * 3;
    int at = find(table, 16, v);
    print_int(table[at]); /* BAD */
}

void stack_underread_bad(void) { lookup((int)opaque(100)); }
void stack_underread_good(void) { lookup((int)opaque(30)); }
