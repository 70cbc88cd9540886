/* Regular kernel: 10 sweeps of a 5-point Jacobi stencil over a 512x512 heap grid; prints a checksum. */
#include <stdio.h>
#include <stdlib.h>

#define N 512

int main(void) {
    double *u = malloc(sizeof(double) * N * N), *v = malloc(sizeof(double) * N * N);
    if (!u || !v) return 1;
    for (int i = 0; i < N * N; i++) u[i] = v[i] = (i % 17) * 0.125;
    for (int sweep = 0; sweep < 10; sweep++) {
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++)
                v[i * N + j] = 0.2 * (u[i * N + j] + u[(i - 1) * N + j] + u[(i + 1) * N + j] + u[i * N + j - 1] + u[i * N + j + 1]);
        double *t = u; u = v; v = t;
    }
    double sum = 0;
    for (int i = 0; i < N * N; i++) sum += u[i];
    printf("%.3f\n", sum);
    free(u);
    free(v);
    return 0;
}
