/* CWE-122: a loop with a large stride (a column of a row-major table of records) walks one row too far: the
 * access lands inside the next live block, past every redzone of memtrace's allocator (its shadow sees
 * addressable bytes; under ASan's layout the row lands in a redzone). Caught by --check -O2's object-level loop
 * check (the loop's range against its first access's block), not at -O0 (each access checked alone). */
#include <stdlib.h>
#include "rc.h"
struct row { char text[4092]; int key; };
static long column(struct row *r, size_t n)
{
    long s = 0;
    for (size_t i = 0; i < n; i++) s += r[i].key; /* BAD when n is 3 */
    return s;
}
static void run(size_t n)
{
    struct row *t = calloc(2, sizeof *t);
    struct row *next = calloc(4, sizeof *next);
    t[0].key = 1;
    t[1].key = 2;
    rc_int(column(rc_p(t), rc_n(n)));
    rc_sum(next, 16);
    free(t);
    free(next);
}
static void bad(void) { run(3); }
static void good(void) { run(2); }
RC_MAIN
