/* run --check --mode rewrite: direct loads and stores past stack variables (docs/check.md, "Direct accesses to
 * stack variables"). Each case overflows or underflows a local by an indexed access, as gcc -O0 writes it
 * (disp(%rbp,%index,scale)), when its second argument is "bad"; "good" does the same work within bounds.
 * Usage: run_stack_direct loop|field|under|read|shifted|all bad|good */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct record { int count; int values[8]; };

static int sum(const int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }

static int loop(size_t last)
{
    int below = 7;
    int buffer[10]; /* BUFFER */
    for (size_t i = 0; i <= last; i++) buffer[i] = (int)i; /* LOOP */
    return sum(buffer, 10) + below;
}

static int field(size_t n)
{
    struct record r; /* RECORD */
    r.count = (int)n;
    for (size_t i = 0; i < n; i++) r.values[i] = (int)i; /* FIELD */
    return sum(r.values, 8) + r.count;
}

static int under(int at)
{
    int table[16]; /* TABLE */
    for (int i = 0; i < 16; i++) table[i] = i * 3;
    return table[at]; /* UNDER */
}

static int read_past(long n)
{
    long before = 1;
    long window[4] = {1, 2, 3, 4}; /* WINDOW */
    long after = 2, total = 0;
    for (long i = 0; i < n; i++) total += window[i]; /* READ */
    return (int)(total + before + after);
}

/* a[i - 1] with i from 1: gcc -O0 computes i - 1 into the index register, the displacement stays a's start */
static int shifted(int n)
{
    int first = 5;
    int a[6]; /* SHIFTED */
    for (int i = 1; i <= n; i++) a[i - 1] = i; /* SHIFT */
    return a[0] + a[5] + first;
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    int bad = strcmp(argv[2], "bad") == 0, r = 0;
    if (strcmp(argv[1], "loop") == 0) r = loop(bad ? 10 : 9);
    else if (strcmp(argv[1], "field") == 0) r = field(bad ? 9 : 8);
    else if (strcmp(argv[1], "under") == 0) r = under(bad ? -1 : 15);
    else if (strcmp(argv[1], "read") == 0) r = read_past(bad ? 5 : 4);
    else if (strcmp(argv[1], "shifted") == 0) r = shifted(bad ? 7 : 6);
    else if (strcmp(argv[1], "all") == 0) r = loop(9) + field(8) + under(15) + read_past(4) + shifted(6);
    printf("done %d\n", r);
    return 0;
}
