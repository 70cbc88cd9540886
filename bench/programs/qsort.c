/* Sorting: libc's qsort (its comparator is instrumented, qsort itself is not) and a hand-written
 * quicksort whose partition loops run short, data-dependent scans, over 1 M pseudo-random ints. */
#include <stdio.h>
#include <stdlib.h>
#define N (1 << 20)

static int cmp(const void *a, const void *b) { int x = *(const int *) a, y = *(const int *) b; return (x > y) - (x < y); }

static void quick(int *a, long lo, long hi)
{
    while (hi - lo > 16) {
        int p = a[lo + (hi - lo) / 2];
        long i = lo, j = hi;
        for (;;) {
            while (a[i] < p) i++;
            while (a[j] > p) j--;
            if (i >= j) break;
            int t = a[i]; a[i] = a[j]; a[j] = t;
            i++; j--;
        }
        quick(a, lo, j);
        lo = j + 1;
    }
    for (long i = lo + 1; i <= hi; i++) {
        int v = a[i];
        long k = i - 1;
        while (k >= lo && a[k] > v) { a[k + 1] = a[k]; k--; }
        a[k + 1] = v;
    }
}

int main(void)
{
    int *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    unsigned x = 2463534242u;
    for (long i = 0; i < N; i++) { x ^= x << 13; x ^= x >> 17; x ^= x << 5; a[i] = b[i] = (int) (x >> 1); }
    qsort(a, N, sizeof *a, cmp);
    quick(b, 0, N - 1);
    long bad = 0;
    for (long i = 0; i < N; i++) bad += a[i] != b[i];
    printf("mismatches %ld, median %d\n", bad, a[N / 2]);
    free(a);
    free(b);
    return 0;
}
