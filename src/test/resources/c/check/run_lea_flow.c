/* run --check --mode rewrite: accesses through a pointer whose value came from a lea of a stack variable, kept
 * across a loop's back edge, a call or a global, or made by gcc's `add %rbp` for a stack array of structs (docs/
 * check.md, "Pointers across branches, loops and calls"). Each case, when its second argument is "bad", makes one
 * access one element past (or before) the object the pointer came from; "good" stays inside it. The count comes
 * from the command line, so gcc cannot fold it. Usage: run_lea_flow CASE bad|good (CASE: down call kept records
 * wide all) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int down(int last)
{
    int buf[5]; /* DOWN */
    int *p = &buf[4];
    for (int i = 0; i <= last; i++) {
        *p = i; /* DOWN_AT */
        p--;
    }
    return buf[0] + buf[4];
}

__attribute__((noinline)) static int offset(int n) { return n; }

static int call(int n)
{
    long buf[4] = {0}; /* CALL */
    long *p = buf;
    *(p + offset(n)) = 1; /* CALL_AT */
    return (int)buf[0];
}

struct three { int a, b, c; };
struct three *kept_at;

static int kept(int bad)
{
    char small[8] = {0}; /* KEPT */
    kept_at = (struct three *)small;
    if (bad)
        kept_at->c = 1; /* KEPT_AT */
    else
        kept_at->b = 1;
    return small[0] + small[4];
}

struct rec { int id; short kind; short flags; int weight; };

static int records(int last)
{
    struct rec table[8]; /* RECORDS */
    for (int i = 0; i <= last; i++) {
        table[i].id = i; /* RECORDS_AT */
        table[i].kind = 1;
    }
    return table[0].kind;
}

static int wide(int bad)
{
    char two[2] = {0}; /* WIDE */
    void *p = two;
    if (bad)
        *(int *)p = 3; /* WIDE_AT */
    else
        *(short *)p = 3;
    return two[0];
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    int bad = strcmp(argv[2], "bad") == 0;
    long r = 0;
    if (strcmp(argv[1], "down") == 0) r = down(bad ? 5 : 4);
    else if (strcmp(argv[1], "call") == 0) r = call(bad ? 4 : 3);
    else if (strcmp(argv[1], "kept") == 0) r = kept(bad);
    else if (strcmp(argv[1], "records") == 0) r = records(bad ? 8 : 7);
    else if (strcmp(argv[1], "wide") == 0) r = wide(bad);
    else if (strcmp(argv[1], "all") == 0) r = down(4) + call(3) + kept(0) + records(7) + wide(0);
    printf("done %ld\n", r);
    return 0;
}
