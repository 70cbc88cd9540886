/* CWE-121: an array of 4 structs on the stack, indexed by a count that reached 4. */
#include "rc.h"
struct point { int x, y; };
static void run(size_t count)
{
    struct point pts[4];
    for (size_t i = 0; i < 4; i++) pts[i].x = pts[i].y = (int)i;
    pts[rc_n(count)].y = 99; /* BAD when count is 4 */
    rc_sum(pts, sizeof pts);
}
static void bad(void) { run(4); }
static void good(void) { run(3); }
RC_MAIN
