/* CWE-121 on a global struct: memset of the struct's size plus one into it. Twin: sizeof. */
#include <string.h>
#include "corpus.h"

struct config { int flags; char name[20]; };
struct config current;

static void clear(size_t n)
{
    memset(&current, 0, n); /* BAD */
    print_bytes(&current, sizeof current);
}

void global_memset_overflow_bad(void) { clear(opaque(sizeof current + 1)); }
void global_memset_overflow_good(void) { clear(opaque(sizeof current)); }
