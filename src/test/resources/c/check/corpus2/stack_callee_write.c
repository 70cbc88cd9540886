/* CWE-121: a callee fills its caller's 4-int stack array through a pointer with a count the caller did not
 * check (5): the last store is past the caller's array. Twin: 4. */
#include "corpus.h"

__attribute__((noinline)) static void fill_ids(int *out, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = (int)(100 + i); /* BAD */
}

static void run(size_t n)
{
    int ids[4];
    fill_ids(ids, n);
    print_bytes(ids, sizeof ids);
}

void stack_callee_write_bad(void) { run(opaque(5)); }
void stack_callee_write_good(void) { run(opaque(4)); }
