/* Stretch (Juliet CWE-121 type_overrun): a loop over a struct's char array writes 4 bytes past it into the
 * next field of the same stack struct; every byte is inside the struct, so no redzone is touched. */
#include "rc.h"
struct rec { char name[8]; int id; int pad; };
static void run(size_t len)
{
    struct rec r;
    r.id = 1234;
    r.pad = 0;
    for (size_t i = 0; i < rc_n(len); i++) r.name[i] = 'n'; /* BAD when len is 12 */
    rc_int(r.id);
    rc_sum(&r, sizeof r);
}
static void bad(void) { run(12); }
static void good(void) { run(8); }
RC_MAIN
