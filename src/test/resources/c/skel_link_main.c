/* The main object of SkeletonLinkTest's program, linked with skel_link_stencil.c and skel_link_blur.c (in any
 * order): fills the arrays the other objects' nests read (nests of its own, two and three loops deep), sums a
 * triangle (j < i: the inner bound is the outer counter), runs the other objects' kernels and prints one line,
 * a value of each result, which the full and the skeleton build must print alike. What it does not cover:
 * threads and calls inside the nests (skel_kernels.c, skel_calls.c). */
#include <stdio.h>
#define N 40
#define M 12
#define ROWS 30
#define COLS 36
#define C 3
extern double G[N][N], H[N][N];
extern double V[M][M][M], W[M][M][M];
extern long I[ROWS][COLS], B[ROWS][COLS];
extern long P[ROWS][COLS][C], Q[ROWS][COLS];
void stencil2d(void);
void stencil3d(void);
void blur(void);
void channels(void);
static long T[N][N];

__attribute__((noinline)) long triangle(void) {
    long s = 0;
    for (long i = 0; i < N; i++)
        for (long j = 0; j < i; j++) s += T[i][j];
    return s;
}

int main(void) {
    for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) { G[i][j] = i + j; T[i][j] = i * j; }
    for (long i = 0; i < M; i++) for (long j = 0; j < M; j++) for (long k = 0; k < M; k++) V[i][j][k] = i * j - k;
    for (long y = 0; y < ROWS; y++)
        for (long x = 0; x < COLS; x++) {
            I[y][x] = y * x % 17;
            for (long c = 0; c < C; c++) P[y][x][c] = y + x + c;
        }
    stencil2d();
    stencil3d();
    blur();
    channels();
    long t = triangle();
    printf("%g %g %ld %ld %ld\n", H[N / 2][N / 2], W[M / 2][M / 2][M / 2], B[ROWS / 2][COLS / 2], Q[ROWS - 1][COLS - 1], t);
    return 0;
}
