/* Irregular kernel like NPB CG's: y = A x in CSR form, 14,000 rows of 11-12 random columns (sorted within
 * a row), 100 products; the column index is random, so p[col[k]] is base + 8 x (a 14-bit index). Prints a
 * checksum. */
#include <stdio.h>
#include <stdlib.h>

#define N 14000
#define PER_ROW 11
#define ITERS 100
static int rowstr[N + 1];
static int colidx[N * (PER_ROW + 1)];
static double a[N * (PER_ROW + 1)], p[N], q[N];

static unsigned rnd(unsigned *s) { return *s = *s * 1103515245u + 12345u, *s >> 8; }

static int cmp(const void *x, const void *y) { return *(const int *)x - *(const int *)y; }

int main(void) {
    unsigned s = 7;
    int nz = 0;
    for (int i = 0; i < N; i++) {
        rowstr[i] = nz;
        int k = PER_ROW + (int)(rnd(&s) % 2);
        for (int j = 0; j < k; j++) {
            colidx[nz + j] = (int)(rnd(&s) % N);
            a[nz + j] = (double)(rnd(&s) % 1000) / 1000.0;
        }
        qsort(colidx + nz, (size_t)k, sizeof colidx[0], cmp);
        nz += k;
    }
    rowstr[N] = nz;
    for (int i = 0; i < N; i++) p[i] = 1.0 / (i + 1);
    for (int it = 0; it < ITERS; it++) {
        for (int j = 0; j < N; j++) {
            double sum = 0.0;
            for (int k = rowstr[j]; k < rowstr[j + 1]; k++) sum += a[k] * p[colidx[k]];
            q[j] = sum;
        }
        double norm = 0.0;
        for (int j = 0; j < N; j++) norm += q[j] * q[j];
        for (int j = 0; j < N; j++) p[j] = q[j] / (norm + 1.0) + 1.0 / (j + 1);
    }
    double sum = 0;
    for (int i = 0; i < N; i++) sum += p[i];
    printf("%.9f\n", sum);
    return 0;
}
