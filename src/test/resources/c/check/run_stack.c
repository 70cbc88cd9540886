/* run --check's stack variables from DWARF (RunCheckStackTest): each case overflows a local of its own frame, or
 * of its caller's, through a function the agent checks by its range; "good" does the same work within bounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile size_t extra; /* 0: the compiler cannot see the sizes */

static void fill(char *to, size_t n)
{
    memset(to, 'x', n); /* FILL */
}

static int copy_in(int bad)
{
    char src[64];
    char buf[16]; /* BUF */
    memset(src, 'a', sizeof src);
    memcpy(buf, src, bad ? 32 + extra : 16 + extra); /* MEMCPY */
    return buf[3];
}

static int callee_fills(int bad)
{
    struct { int id; char name[20]; } rec; /* REC */
    rec.id = 1;
    fill(rec.name, bad ? 24 + extra : 20 + extra); /* CALLEE */
    return rec.name[0] + rec.id;
}

static int name_copy(int bad)
{
    char name[8]; /* NAME */
    strcpy(name, bad ? "overlong" : "exactly"); /* STRCPY */
    return name[0];
}

static int formatted(int bad)
{
    char line[12]; /* LINE */
    sprintf(line, "%d:%s", 42, bad ? "abcdefghij" : "abc"); /* SPRINTF */
    return line[0];
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    int bad = strcmp(argv[2], "bad") == 0, r = 0;
    if (strcmp(argv[1], "memcpy") == 0) r = copy_in(bad); /* MAIN_MEMCPY */
    else if (strcmp(argv[1], "callee") == 0) r = callee_fills(bad); /* MAIN_CALLEE */
    else if (strcmp(argv[1], "strcpy") == 0) r = name_copy(bad); /* MAIN_STRCPY */
    else if (strcmp(argv[1], "sprintf") == 0) r = formatted(bad); /* MAIN_SPRINTF */
    else if (strcmp(argv[1], "all") == 0) r = copy_in(bad) + callee_fills(bad) + name_copy(bad) + formatted(bad); /* ALL */
    printf("done %d\n", r);
    return 0;
}
