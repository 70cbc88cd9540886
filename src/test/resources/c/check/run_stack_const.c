/* run --check --mode rewrite: constant-offset loads and stores past stack variables (docs/check.md, "Constant
 * offsets past a stack variable"). Each case, when its second argument is "bad", makes one access whose
 * displacement from %rbp gcc -O0 fixed at compile time outside the variable it indexes; "good" runs the same
 * function through the in-bounds branch. Usage: run_stack_const tail|under|field|smash|all bad|good */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pair { int key; int vals[3]; };

static int sum(const int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }

static int tail(int bad)
{
    int buf[5]; /* BUF */
    memset(buf, 0, sizeof buf);
    if (bad) buf[5] = 7; /* TAIL */
    else buf[4] = 7;
    return sum(buf, 5);
}

static long under(int bad)
{
    long t[4] = {1, 2, 3, 4}; /* TABLE */
    long r;
    if (bad) r = t[-1]; /* UNDER */
    else r = t[0];
    return r + t[3];
}

static int field(int bad)
{
    struct pair p; /* PAIR */
    memset(&p, 0, sizeof p);
    if (bad) p.vals[3] = 9; /* FIELD */
    else p.vals[2] = 9;
    return p.key + sum(p.vals, 3);
}

static int smash(int bad)
{
    char tag[5]; /* TAG */
    memset(tag, 'a', sizeof tag);
    if (bad) tag[5] = 'z'; /* SMASH */
    else tag[4] = 'z';
    return tag[0] + tag[4];
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    int bad = strcmp(argv[2], "bad") == 0;
    long r = 0;
    if (strcmp(argv[1], "tail") == 0) r = tail(bad);
    else if (strcmp(argv[1], "under") == 0) r = under(bad);
    else if (strcmp(argv[1], "field") == 0) r = field(bad);
    else if (strcmp(argv[1], "smash") == 0) r = smash(bad);
    else if (strcmp(argv[1], "all") == 0) r = tail(0) + under(0) + field(0) + smash(0);
    printf("done %ld\n", r);
    return 0;
}
