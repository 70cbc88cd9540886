/* CWE-590: free of a variable-length array. */
#include <stdlib.h>
#include <string.h>
#include "rc.h"
static void run(int bad)
{
    size_t n = rc_n(24);
    char vla[n];
    memset(vla, 'v', n);
    char *p = bad ? vla : malloc(n);
    memcpy(p, vla, n);
    rc_sum(p, n);
    free(p); /* BAD when p is the VLA */
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
