/* sarif.c: two bugs in one run, for the SARIF log of `memtrace cc --check` (CheckOutputTest): a heap overflow,
 * then a use after free. ./sarif bad (with MEMTRACE_CHECK=continue) makes both; ./sarif good neither. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int bad = argc > 1 && strcmp(argv[1], "bad") == 0;
    char *p = malloc(16); /* ALLOC */
    volatile int n = bad ? 16 : 15;
    p[n] = 1; /* OVERFLOW */
    free(p); /* FREE */
    if (bad) n = p[0]; /* UAF */
    printf("done\n");
    return 0;
}
