/* CWE-401: strdup in a loop, each copy dropped (an error path that returns without freeing). */
#include <stdlib.h>
#include <string.h>
#include "rc.h"
static int check(const char *word, int bad)
{
    char *copy = strdup(word);
    int ok = copy[0] != 'x';
    if (!ok || !bad) free(copy);
    return ok; /* BAD: copy leaks when ok */
}
static void run(int bad)
{
    const char *words[] = { "alpha", "beta", "gamma" };
    int n = 0;
    for (int i = 0; i < 3; i++) n += check(rc_p((void *)words[i]), bad);
    rc_int(n);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
