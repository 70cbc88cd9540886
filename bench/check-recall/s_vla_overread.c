/* CWE-126: a read one past a variable-length array. */
#include "rc.h"
static void run(size_t extra)
{
    size_t n = rc_n(13);
    char v[n];
    for (size_t i = 0; i < n; i++) v[i] = (char)i;
    long sum = 0;
    for (size_t i = 0; i < n + extra; i++) sum += v[i]; /* BAD when extra is 1 */
    rc_int(sum);
}
static void bad(void) { run(rc_n(1)); }
static void good(void) { run(rc_n(0)); }
RC_MAIN
