/* positional.c: printf's positional arguments (%2$s, %.*3$s, %1$n), for the format checks of
 * `memtrace cc --check` (CheckOutputTest). Each case NAME bad|good: the bad one reads or writes past a
 * block through a numbered argument, the good twin stays inside it; both print "done". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *unterminated(void)
{
    char *p = malloc(16); /* ALLOC */
    memset(p, 'x', 16);
    return p;
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    int bad = strcmp(argv[2], "bad") == 0;
    if (strcmp(argv[1], "string") == 0) {
        char *p = unterminated();
        if (!bad) p[15] = 0;
        printf("%2$s %1$d\n", 7, p); /* BAD:string */
        free(p);
    } else if (strcmp(argv[1], "precision") == 0) {
        char *p = unterminated();
        printf("%3$d %1$.*2$s\n", p, bad ? 17 : 16, 3); /* BAD:precision */
        free(p);
    } else if (strcmp(argv[1], "count") == 0) {
        short *n = malloc(bad ? 1 : 2);
        char buf[32];
        snprintf(buf, sizeof buf, "%2$s%1$hn", n, "abc"); /* BAD:count */
        free(n);
    } else {
        return 2;
    }
    printf("done\n");
    return 0;
}
