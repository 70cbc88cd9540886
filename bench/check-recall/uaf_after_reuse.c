/* CWE-416: a stale pointer read after many other blocks of the same size were allocated (the freed chunk
 * would be reused by a plain malloc; the checker's quarantine must still know it). */
#include <stdlib.h>
#include "rc.h"
static void run(int bad)
{
    int *stale = malloc(rc_n(64));
    stale[3] = 3;
    if (bad) free(stale);
    void *others[64];
    for (int i = 0; i < 64; i++) { others[i] = malloc(rc_n(64)); ((int *)others[i])[3] = i; }
    rc_int(stale[3]); /* BAD */
    for (int i = 0; i < 64; i++) free(others[i]);
    if (!bad) free(stale);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
