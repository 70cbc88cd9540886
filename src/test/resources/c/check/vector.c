/* cc --check with vectorised loops (CheckVectorTest): scale's loop is vectorised by gcc -O2 and checked by one
 * range at its entry; gather's index comes from memory, so it keeps gcc's per-access checks. Usage: vector
 * scale|gather bad|good. */
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

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    int bad = strcmp(argv[2], "bad") == 0;
    if (strcmp(argv[1], "scale") == 0) {
        double *d = malloc((N - bad) * sizeof *d); /* SCALE_ALLOC */
        double *s = calloc(N, sizeof *s);
        scale(d, s);
        printf("%g\n", d[N - 2]);
        free(s);
        free(d);
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
