/* CWE-122: aligned_alloc(64, 100): the store at offset 100 is past the request (the chunk is larger). */
#include <stdlib.h>
#include "rc.h"
static void run(size_t at)
{
    unsigned char *p = aligned_alloc(64, rc_n(128));
    p = rc_p(p);
    free(p);
    p = aligned_alloc(64, rc_n(100));
    for (size_t i = 0; i < 100; i++) p[i] = (unsigned char)i;
    p[rc_n(at)] = 1; /* BAD when at is 100 */
    rc_sum(p, 100);
    free(p);
}
static void bad(void) { run(100); }
static void good(void) { run(99); }
RC_MAIN
