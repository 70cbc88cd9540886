/* into.c: an overflow that lands inside another live block, stepping over the redzone between them (issue 23;
 * no redzone checker sees it), for `memtrace cc --check -O2` (CheckIntoTest). ./into KIND bad|good:
 *   stride   a loop writes every 64th int of a block of 16 bytes: the second store (+256) lands inside the
 *            next block (the allocator's chunks of 112 bytes lie one after the other); the good twin stores once
 *   walk     a loop reads column 1500 of a 2 x 2000 int matrix from its second row: bad reads 2 rows (8000 bytes
 *            a step: the second one lands in the next block), good 1; and a good walk down a column of a large
 *            matrix from a pointer into its middle (the block is found that far back)
 *   down     a loop writes downwards, 4096 bytes a step, from a block of 16 bytes: the second store lands inside
 *            the block allocated before it (an underflow); the good twin stores once
 *   single   one store a[k], no loop, k the distance to the next block (in ints) plus 4: it lands in that
 *            block's fifth int, past both redzones (built -O2 and -O0); the good twin stores a[3] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the count as the bad or good string says, through atoi: gcc must not know the loops' trip counts */
static int count(const char *mode, const char *bad, const char *good) { return atoi(strcmp(mode, "bad") == 0 ? bad : good); }

__attribute__((noinline)) static void fill(int *a, int n)
{
    for (int i = 0; i < n; i++) a[i * 64] = -1; /* BAD_STRIDE */
}

__attribute__((noinline)) static void down(int *a, int n)
{
    for (int i = 0; i < n; i++) a[-i * 1024] = -1; /* BAD_DOWN */
}

__attribute__((noinline)) static long column(int (*rows)[2000], int n, int k)
{
    long s = 0;
    for (int i = 0; i < n; i++) s += rows[i][k]; /* BAD_WALK */
    return s;
}

__attribute__((noinline)) static void poke(int *a, long k)
{
    a[k] = -1; /* BAD_SINGLE */
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    if (strcmp(argv[1], "stride") == 0) {
        int *a = malloc(16); /* ALLOC_A */
        int *b = malloc(1024); /* ALLOC_B */
        for (int i = 0; i < 256; i++) b[i] = i;
        fill(a, count(argv[2], "2", "1"));
        long s = 0;
        for (int i = 0; i < 256; i++) s += b[i];
        printf("%ld %d\n", s, a[0]);
        free(a);
        free(b);
    } else if (strcmp(argv[1], "walk") == 0) {
        int (*m)[2000] = calloc(2, sizeof *m); /* ALLOC_M */
        int *next = calloc(4096, sizeof *next); /* ALLOC_NEXT */
        int (*big)[2000] = calloc(64, sizeof *big);
        long s = column(m + 1, count(argv[2], "2", "1"), 1500);
        s += column(big + 32, 32, 1999);
        printf("%ld %d\n", s, next[0]);
        free(m);
        free(next);
        free(big);
    } else if (strcmp(argv[1], "down") == 0) {
        int *prev = malloc(4096); /* ALLOC_PREV */
        int *a = malloc(16); /* ALLOC_LAST */
        for (int i = 0; i < 1024; i++) prev[i] = i;
        down(a, count(argv[2], "2", "1"));
        long s = 0;
        for (int i = 0; i < 1024; i++) s += prev[i];
        printf("%ld %d\n", s, a[0]);
        free(prev);
        free(a);
    } else if (strcmp(argv[1], "single") == 0) {
        int *a = malloc(16); /* ALLOC_S */
        int *b = malloc(64); /* ALLOC_T */
        for (int i = 0; i < 16; i++) b[i] = i;
        poke(a, strcmp(argv[2], "bad") == 0 ? (long)(b - a) + 4 : 3);
        long s = 0;
        for (int i = 0; i < 16; i++) s += b[i];
        printf("%ld %d\n", s, a[3]);
        free(a);
        free(b);
    }
    return 0;
}
