/* CWE-122: an index computed from the distance to another live block: the store lands inside that block,
 * past every redzone (ASan's shadow sees an addressable byte). */
#include <stdint.h>
#include <stdlib.h>
#include "rc.h"
static void run(int bad)
{
    char *a = malloc(rc_n(16));
    char *b = malloc(rc_n(16));
    for (int i = 0; i < 16; i++) a[i] = b[i] = 'b';
    size_t k = bad ? (size_t)((uintptr_t)b - (uintptr_t)a) + 4 : 4;
    a[rc_n(k)] = 'X'; /* BAD: lands in b[4] */
    rc_sum(a, 16);
    rc_sum(b, 16);
    free(a);
    free(b);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
