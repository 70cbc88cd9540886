/* CWE-122: appending one character to a strdup'ed string in place (no room for it and its NUL). */
#include <stdlib.h>
#include <string.h>
#include "rc.h"
static void run(int bad)
{
    char *s = strdup(rc_p((void *)"name"));
    size_t n = strlen(s);
    if (bad) {
        s[n] = '!';       /* overwrites the NUL: fine */
        s[n + 1] = 0;     /* BAD: one past the block */
    } else {
        s[n - 1] = '!';
    }
    rc_sum(s, n);
    free(s);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
