/* CWE-415: a block freed twice that nothing else uses: gcc -O2 deletes the malloc/free pair (and the second
 * free with it) unless free is no builtin. */
#include <stdlib.h>
#include "rc.h"
static void bad(void)
{
    int *p = malloc(sizeof *p);
    free(p);
    free(p); /* BAD */
    rc_int(1);
}
static void good(void)
{
    int *p = malloc(sizeof *p);
    free(p);
    rc_int(1);
}
RC_MAIN
