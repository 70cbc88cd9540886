/* Loop nests for the outer-loop skeleton tests (SkeletonOuterTest): a matrix multiply i-j-k, a 2D
 * stencil, row sums through a bumped pointer, and a triangle whose inner trip count is the outer counter
 * (j < i). Every inner loop is computed; the tests count which outer loops take over its records. It prints
 * C's last element, H's middle one, S's last and the triangle's sum, which both builds must print alike. What
 * it does not cover: gcc lays the matrix multiply and the row sums out so that their outer loops stay declined
 * (a counter stepped through a copy, a guard around the inner loop), and -Os nests nothing. */
#include <stdio.h>

#define N 40
static double A[N * N], B[N * N], C[N * N];
static double G[N][N], H[N][N];
static long R[N * N], S[N];
static long T[N][N];

__attribute__((noinline)) void matmul(double *c, const double *a, const double *b, long n) {
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++) {
            double s = 0;
            for (long k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
            c[i * n + j] = s;
        }
}
__attribute__((noinline)) void stencil2d(void) {
    for (int i = 1; i < N - 1; i++)
        for (int j = 1; j < N - 1; j++)
            H[i][j] = (G[i - 1][j] + G[i + 1][j] + G[i][j - 1] + G[i][j + 1]) * 0.25;
}
__attribute__((noinline)) void rowsums(const long *p, long rows, long cols, long *out) {
    for (long r = 0; r < rows; r++) {
        long s = 0;
        for (long c = 0; c < cols; c++) s += *p++;
        out[r] = s;
    }
}
__attribute__((noinline)) long triangle(void) {
    long s = 0;
    for (long i = 0; i < N; i++)
        for (long j = 0; j < i; j++) s += T[i][j];
    return s;
}

int main(void) {
    for (int i = 0; i < N * N; i++) { A[i] = i % 7; B[i] = i % 5; R[i] = i; }
    for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) { G[i][j] = i + j; T[i][j] = i * j; }
    matmul(C, A, B, N);
    stencil2d();
    rowsums(R, N, N, S);
    long t = triangle();
    printf("%g %g %ld %ld\n", C[N * N - 1], H[N / 2][N / 2], S[N - 1], t);
    return 0;
}
