/* CWE-121: a function's static array read one past its end by an inclusive bound. */
#include "corpus.h"

static long sum(size_t n)
{
    static short history[32];
    long total = 0;
    for (size_t i = 0; i < 32; i++) history[i] = (short)i;
    for (size_t i = 0; i <= n; i++) total += history[i]; /* BAD */
    return total;
}

void global_static_local_bad(void) { print_int(sum(opaque(32))); }
void global_static_local_good(void) { print_int(sum(opaque(31))); }
