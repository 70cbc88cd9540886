/* CWE-590: free of a global struct's array member. */
#include <stdlib.h>
#include "rc.h"
struct config { int version; char name[32]; } cfg = { 1, "default" };
static void run(int bad)
{
    char *name = bad ? cfg.name : malloc(rc_n(32));
    name[0] = 'd';
    free(rc_p(name)); /* BAD: not from malloc */
    rc_int(cfg.version);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
