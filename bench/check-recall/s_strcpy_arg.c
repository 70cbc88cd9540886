/* CWE-121: strcpy of a 30-character argument into a 20-byte stack array (a command-line copy). */
#include <string.h>
#include "rc.h"
static void copy(const char *arg)
{
    char name[20];
    strcpy(name, arg); /* BAD when arg has 20 or more characters */
    rc_sum(name, strlen(name));
}
static void bad(void) { copy(rc_p((void *)"abcdefghijklmnopqrstuvwxyz1234")); }
static void good(void) { copy(rc_p((void *)"abcdefghijklmnopqrs")); }
RC_MAIN
