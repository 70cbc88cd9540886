/* run --check --mode rewrite: accesses through a pointer whose value came from a lea of a global or of a stack
 * variable in the same straight-line code (docs/check.md, "Pointers from a lea of a global or a variable").
 * Each case, when its second argument is "bad", makes one access one element past (or before) the object the
 * pointer came from, landing in a neighbour or in bytes nobody poisoned; "good" makes the in-bounds one. The
 * index comes from the command line, so gcc cannot fold it. Usage: run_lea_origin CASE bad|good (CASE: global
 * static pointer pbuf under folded all) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int counts[8];    /* COUNTS: 32 bytes, the next global right after it (no padding to poison) */
int others[8];

static int global(int i)
{
    counts[i] = 3; /* GLOBAL */
    return counts[0] + others[0];
}

static int statics(int i)
{
    static short history[16]; /* HISTORY */
    history[i] = 5; /* STATIC */
    return history[0];
}

static int pointer(int n)
{
    char buf[5]; /* BUF */
    char *p;
    memset(buf, 'a', sizeof buf);
    p = buf;
    *(p + n) = 1; /* POINTER */
    return buf[0];
}

static int pbuf(int n)
{
    int one[6] = {0};
    int two[5] = {0}; /* TWO */
    int *rows[2] = {one, two};
    rows[1][n] = 1; /* PBUF */
    return one[0] + two[0];
}

static long under(int n)
{
    long t[4] = {1, 2, 3, 4}; /* TABLE */
    long *p = t;
    long r = *(p - n); /* UNDER */
    return r + t[3];
}

char first[16], second[16];

/* e = first + 16: gcc folds it into the lea (first+16(%rip)), the address of second, which follows first; e[-n]
 * is in first, so the pointer may be either's: never reported below second (n = 16 is first[0]) */
static int folded(int n)
{
    char *e = first + sizeof first;
    e[-n] = 7;
    (first + 16)[-n] = 8;
    return first[15] + second[0];
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    int bad = strcmp(argv[2], "bad") == 0;
    long r = 0;
    if (strcmp(argv[1], "global") == 0) r = global(bad ? 8 : 7);
    else if (strcmp(argv[1], "static") == 0) r = statics(bad ? 16 : 15);
    else if (strcmp(argv[1], "pointer") == 0) r = pointer(bad ? 5 : 4);
    else if (strcmp(argv[1], "pbuf") == 0) r = pbuf(bad ? 5 : 4);
    else if (strcmp(argv[1], "under") == 0) r = under(bad ? 1 : 0);
    else if (strcmp(argv[1], "folded") == 0) r = folded(bad ? 16 : 1);
    else if (strcmp(argv[1], "all") == 0) r = global(7) + statics(15) + pointer(4) + pbuf(4) + under(0) + folded(1) + folded(16);
    printf("done %ld\n", r);
    return 0;
}
