/* CWE-401: two blocks pointing at each other, no pointer from outside (LeakSanitizer reports both). */
#include <stdlib.h>
#include "rc.h"
struct peer { struct peer *other; int v; };
static void run(int bad)
{
    struct peer *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    a->other = b; b->other = a;
    a->v = 1; b->v = 2;
    rc_int(a->other->v + b->other->v);
    if (!bad) { free(a); free(b); }
    a = b = NULL;
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
