/* Frees glibc refuses (issue 23, "a bug on the way"): argv[1] double (free twice), inside (free 16 bytes
   into a block), stack (free a stack address) or realloc (realloc of a freed block); argv[2] the block's
   size. Prints "bad <address>" (the pointer of the bad call) before the call; untraced, glibc prints its
   message on stderr and the program dies of SIGABRT. "survived" means the bad call returned. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    size_t n = strtoul(argv[2], 0, 0);
    char *p = malloc(n), *q = malloc(n), s[32];
    p[0] = 1;
    q[0] = 2;
    char *bad = !strcmp(argv[1], "inside") ? p + 16 : !strcmp(argv[1], "stack") ? s + argc : p;
    printf("bad %p\n", (void *)bad);
    fflush(stdout);
    if (!strcmp(argv[1], "double") || !strcmp(argv[1], "realloc")) free(p);
    if (!strcmp(argv[1], "realloc")) p = realloc(bad, n * 2);
    else free(bad);
    printf("survived %d\n", p[0] + q[0]);
    return 0;
}
