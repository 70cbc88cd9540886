/* CWE-416: a struct freed by a cleanup function, then its field read through the caller's pointer. */
#include <stdlib.h>
#include <string.h>
#include "rc.h"
struct session { int id; char user[20]; struct session *next; };
static void close_session(struct session *s) { free(s); }
static void run(int bad)
{
    struct session *s = malloc(sizeof *s);
    s->id = 7;
    strcpy(s->user, "alice");
    s->next = NULL;
    if (bad) close_session(s);
    rc_int(s->id); /* BAD */
    if (!bad) close_session(s);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
