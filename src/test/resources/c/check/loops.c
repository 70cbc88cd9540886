/* Loop shapes for the pruning rules (CheckPruningTest): `./loops NAME bad|good [n [overshoot]]`. Each loop's bad run
 * touches one element past (or before) its array; the good run stays inside (masked: a global's index under a mask,
 * proven inside by the in-bounds rule, or under a mask twice too wide, which keeps its check). Built --check and
 * --check --no-prune, both must report the same bug and stay silent on the same twins. */
#include <stdlib.h>
#include <string.h>

volatile long sink;
struct point { long x, y, z; };

__attribute__((noinline)) static long sum_up(int n, int bad)
{
    long *a = malloc(n * sizeof *a), s = 0;
    memset(a, 0, n * sizeof *a);
    for (int i = 0; i < n + bad; i++) s += a[i];
    free(a);
    return s;
}

__attribute__((noinline)) static long sum_down(int n, int bad)
{
    int *a = malloc(n * sizeof *a);
    long s = 0;
    memset(a, 0, n * sizeof *a);
    for (long i = n - 1; i >= -bad; i--) s += a[i];
    free(a);
    return s;
}

__attribute__((noinline)) static long stride(int n, int bad)
{
    short *a = malloc(n * sizeof *a);
    long s = 0;
    memset(a, 0, n * sizeof *a);
    for (long i = 0; i < n + bad; i += 2) s += a[i] + a[i + 1];
    free(a);
    return s;
}

__attribute__((noinline)) static long pointers(int n, int bad)
{
    char *a = malloc(n), *end = a + n + bad;
    long s = 0;
    memset(a, 1, n);
    for (char *p = a; p != end; p++) s += *p;
    free(a);
    return s;
}

__attribute__((noinline)) static long fields(int n, int bad)
{
    struct point *p = malloc(n * sizeof *p);
    long s = 0;
    memset(p, 0, n * sizeof *p);
    for (int i = 0; i < n + bad; i++) s += p[i].x * p[i].y - p[i].z;
    free(p);
    return s;
}

__attribute__((noinline)) static long copy2d(int n, int bad)
{
    int *a = malloc(n * n * sizeof *a), *b = malloc(n * n * sizeof *b);
    memset(a, 0, n * n * sizeof *a);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n + (bad && i == n - 1); j++) b[i * n + j] = a[i * n + j] + 1;
    long s = b[0];
    free(a);
    free(b);
    return s;
}

__attribute__((noinline)) static long indirect(int n, int bad)
{
    int *idx = malloc(n * sizeof *idx), *v = malloc(n * sizeof *v);
    for (int i = 0; i < n; i++) { idx[i] = n - 1 - i; v[i] = i; }
    if (bad) idx[n / 2] = n;
    long s = 0;
    for (int i = 0; i < n; i++) s += v[idx[i]];
    free(idx);
    free(v);
    return s;
}

__attribute__((noinline)) static long branches(int n, int bad)
{
    long *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), s = 0;   /* BRANCHES_ALLOC */
    for (int i = 0; i < n; i++) a[i] = i * 5 % 7;
    for (int i = 0; i < n + bad; i++) {
        long v = a[i];                       /* BRANCHES */ /* every iteration: one check at entry */
        if (v > 3) { b[i] = v * 3; s += v; } /* some iterations: checked where it is */
    }
    s += b[n / 2];
    free(a);
    free(b);
    return s;
}

long masked_table[64];            /* MASKED_TABLE */ /* not static: gcc cannot assume it stays 0 */

/* a masked index proven inside masked_table: no check; a mask twice too wide keeps its check */
__attribute__((noinline)) static long masked63(int n) { long s = 0; for (int i = 0; i < 2 * n; i++) s += masked_table[i & 63]; return s; }
__attribute__((noinline)) static long masked127(int n) { long s = 0; for (int i = 0; i < 2 * n; i++) s += masked_table[i & 127]; /* MASKED_BAD */ return s; }

__attribute__((noinline)) static long masked(int n, int bad)
{
    return bad ? masked127(n) : masked63(n);
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    int bad = strcmp(argv[2], "bad") == 0, n = argc > 3 ? atoi(argv[3]) : 64;
    if (bad && argc > 4) bad = atoi(argv[4]);       /* how far past: pointers' loop takes any overshoot */
    struct { const char *name; long (*run)(int, int); } cases[] = {
        {"sum_up", sum_up}, {"sum_down", sum_down}, {"stride", stride}, {"pointers", pointers},
        {"fields", fields}, {"copy2d", copy2d}, {"indirect", indirect}, {"branches", branches}, {"masked", masked},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(cases[i].name, argv[1]) == 0) { sink = cases[i].run(n, bad); return 0; }
    return 2;
}
