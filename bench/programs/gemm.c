/* Regular kernel: C += A x B on 256x256 doubles, i-k-j order (rows of B streamed); prints a checksum. */
#include <stdio.h>

#define N 256
static double a[N][N], b[N][N], c[N][N];

int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            a[i][j] = (i * 7 + j) % 13 * 0.5;
            b[i][j] = (i + j * 3) % 11 * 0.25;
        }
    for (int i = 0; i < N; i++)
        for (int k = 0; k < N; k++) {
            double aik = a[i][k];
            for (int j = 0; j < N; j++) c[i][j] += aik * b[k][j];
        }
    double sum = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) sum += c[i][j];
    printf("%.1f\n", sum);
    return 0;
}
