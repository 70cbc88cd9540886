/* CWE-124: a store at index -2 of a stack array (an index from a failed search, -1, minus one). */
#include <string.h>
#include "rc.h"
static long find(const char *s, char c) { const char *p = strchr(s, c); return p ? p - s : -1; }
static void run(const char *s)
{
    char buf[16];
    memset(buf, '.', sizeof buf);
    long i = find(rc_p((void *)s), ':');
    buf[i - 1] = '!'; /* BAD when no ':' */
    rc_sum(buf, sizeof buf);
}
static void bad(void) { run("no colon here"); }
static void good(void) { run("key:value"); }
RC_MAIN
