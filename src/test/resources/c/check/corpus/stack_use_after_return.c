/* CWE-562 into a use after return: a function returns the address of its local array, read afterwards. */
#include "corpus.h"

static int *make(int bad)
{
    static int kept[4];
    int local[4];
    int *p = bad ? local : kept;
    for (int i = 0; i < 4; i++) p[i] = i + 1;
    return opaque_ptr(p);
}

static void clobber(void)
{
    volatile char junk[64];
    for (int i = 0; i < 64; i++) junk[i] = (char)i;
}

static void use(int bad)
{
    int *p = make(bad);
    clobber();
    print_int(p[2]); /* BAD */
}

void stack_use_after_return_bad(void) { use((int)opaque(1)); }
void stack_use_after_return_good(void) { use((int)opaque(0)); }
