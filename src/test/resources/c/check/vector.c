/* cc --check with vectorised loops (CheckVectorTest): scale's loop is vectorised by gcc -O2 and checked by one
 * range at its entry; gather's index comes from memory, so it keeps gcc's per-access checks; gemm's inner
 * ranges and a[i][k] are checked once per i (at its middle loop's entry); matmul's dot product counts on its
 * column pointer, so its row's last address needs a shift at entry, and its column walk over B is checked as
 * B's rows once per i (matmul_b: B one element short). Usage: vector scale|gather|gemm|matmul|matmul_b bad|good. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 64

__attribute__((noinline)) static void scale(double *restrict d, const double *restrict s)
{
    for (int i = 0; i < N; i++) d[i] = s[i] * 2.0; /* SCALE */
}

__attribute__((noinline)) static double gather(const double *a, const int *idx)
{
    double sum = 0;
    for (int i = 0; i < N; i++) sum += a[idx[i]]; /* GATHER */
    return sum;
}

#define M 64

__attribute__((noinline)) static void gemm(double (*restrict c)[M], const double (*restrict a)[M],
                                           const double (*restrict b)[M])
{
    for (int i = 0; i < M; i++)
        for (int k = 0; k < M; k++) {
            double aik = a[i][k];
            for (int j = 0; j < M; j++) c[i][j] += aik * b[k][j]; /* GEMM */
        }
}

__attribute__((noinline)) static void matmul(double (*restrict c)[M], const double (*restrict a)[M],
                                             const double (*restrict b)[M])
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < M; j++) {
            double s = 0;
            for (int k = 0; k < M; k++) s += a[i][k] * b[k][j]; /* MATMUL */
            c[i][j] = s;
        }
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    int bad = strcmp(argv[2], "bad") == 0, short_b = strcmp(argv[1], "matmul_b") == 0;
    if (strcmp(argv[1], "scale") == 0) {
        double *d = malloc((N - bad) * sizeof *d); /* SCALE_ALLOC */
        double *s = calloc(N, sizeof *s);
        scale(d, s);
        printf("%g\n", d[N - 2]);
        free(s);
        free(d);
    } else if (strcmp(argv[1], "gemm") == 0 || strcmp(argv[1], "matmul") == 0 || short_b) {
        double (*c)[M] = calloc(M, sizeof *c);
        double (*a)[M] = calloc(M * M - (bad && !short_b), sizeof(double)); /* NEST_ALLOC */
        double (*b)[M] = calloc(M * M - (bad && short_b), sizeof(double)); /* NEST_ALLOC_B */
        if (argv[1][1] == 'e') gemm(c, a, b); else matmul(c, a, b);
        printf("%g\n", c[M - 1][M - 1]);
        free(b);
        free(a);
        free(c);
    } else {
        double *a = calloc(N, sizeof *a); /* GATHER_ALLOC */
        int *idx = malloc(N * sizeof *idx);
        for (int i = 0; i < N; i++) idx[i] = i == N - 1 && bad ? N : i;
        printf("%g\n", gather(a, idx));
        free(idx);
        free(a);
    }
    return 0;
}
