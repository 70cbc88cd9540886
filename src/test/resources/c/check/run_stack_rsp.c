/* run --check --mode rewrite on gcc -O2 -g code, whose frame is addressed from %rsp (docs/check.md, "Stack
 * variables of optimised code"): a memcpy of 24 bytes into an int[5] that gcc expands into constant stores
 * from %rsp (tail: the last one runs 4 bytes past the array), a histogram loop whose counts
 * gcc indexes from %rsp (hist: (%rsp,%rax,4)), and a strcpy past a char[10] (copy, the check runtime's wrapper
 * finding the caller's frame from its CFA). "bad" makes the bad access, "good" the in-bounds one; "all good"
 * runs every twin. Usage: run_stack_rsp tail|hist|copy|all bad|good */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static int sum(const int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }

static const int six[6] = {1, 2, 3, 4, 5, 6};

__attribute__((noinline)) static int tail(int bad)
{
    int buf[5]; /* BUF */
    if (bad) memcpy(buf, six, 24); /* TAIL */
    else memcpy(buf, six, 20);
    return sum(buf, 5);
}

__attribute__((noinline)) static int hist(const unsigned char *v, int n)
{
    int counts[8]; /* COUNTS */
    memset(counts, 0, sizeof counts);
    for (int i = 0; i < n; i++) counts[v[i]]++; /* HIST */
    return sum(counts, 8);
}

__attribute__((noinline)) static int copy(const char *s)
{
    char name[10]; /* NAME */
    strcpy(name, s); /* COPY */
    return (int)strlen(name);
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    int bad = strcmp(argv[2], "bad") == 0;
    unsigned char v[6] = {1, 2, 3, 7, 2, 1};
    if (bad) v[4] = 8;
    long r = 0;
    if (strcmp(argv[1], "tail") == 0) r = tail(bad);
    else if (strcmp(argv[1], "hist") == 0) r = hist(v, 6);
    else if (strcmp(argv[1], "copy") == 0) r = copy(bad ? "0123456789" : "012345678");
    else if (strcmp(argv[1], "all") == 0) r = tail(0) + hist(v, 6) + copy("012345678");
    printf("done %ld\n", r);
    return 0;
}
