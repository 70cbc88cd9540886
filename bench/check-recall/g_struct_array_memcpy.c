/* Global overflow: memcpy of 5 records into a global array of 4 records. */
#include <string.h>
#include "rc.h"
struct item { int id; char tag[12]; };
struct item table[4];
static void run(size_t count)
{
    struct item src[5];
    memset(src, 'i', sizeof src);
    memcpy(table, src, rc_n(count) * sizeof(struct item)); /* BAD when count is 5 */
    rc_sum(table, sizeof table);
}
static void bad(void) { run(5); }
static void good(void) { run(4); }
RC_MAIN
