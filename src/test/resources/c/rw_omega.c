/* A plain program for memtrace run --mode rewrite --omega: field and array accesses in several blocks
   (structures walked in loops, a table indexed by data, a matrix by rows), deterministic, one line of output. */
#include <stdio.h>
#include <stdlib.h>

struct rec { long key; int a, b, c, d; struct rec *next; double w[4]; };

static int table[256];
static double grid[16][16];

__attribute__((noinline)) long mix(struct rec *r, const int *q, int n) {
    long s = 0;
    for (int i = 0; i + 3 < n; i += 4) {
        s += q[i] * r->a + q[i + 1] * r->b + q[i + 2] * r->c + q[i + 3] * r->d;
        if (s > r->key) { r->key = s; r->next->a += q[i]; }
        r->w[i & 3] += (double) q[i + 1];
    }
    return s + r->next->b + r->next->c;
}

__attribute__((noinline)) int chain(struct rec *r) {
    int t = 0;
    while (r) { t += r->a - r->b + r->c * r->d; r->b = t; r = r->next; }
    return t;
}

__attribute__((noinline)) double smooth(int rounds) {
    double sum = 0;
    for (int k = 0; k < rounds; k++)
        for (int i = 1; i < 15; i++)
            for (int j = 1; j < 15; j++) {
                grid[i][j] = (grid[i - 1][j] + grid[i + 1][j] + grid[i][j - 1] + grid[i][j + 1]) * 0.25 + table[(i * j) & 255];
                sum += grid[i][j];
            }
    return sum;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 64;
    struct rec *rs = calloc(8, sizeof *rs);
    int *q = malloc(n * sizeof *q);
    for (int i = 0; i < 8; i++) { rs[i].a = i; rs[i].b = 2 * i; rs[i].c = i + 1; rs[i].d = 3; rs[i].next = i < 7 ? &rs[i + 1] : NULL; }
    for (int i = 0; i < n; i++) q[i] = (i * 7) % 13;
    for (int i = 0; i < 256; i++) table[i] = i % 5;
    long s = 0;
    for (int round = 0; round < 10; round++) s += mix(&rs[round & 3], q, n) + chain(rs);
    double g = smooth(3);
    printf("%ld %d %.3f\n", s, chain(rs), g);
    free(q);
    free(rs);
    return 0;
}
