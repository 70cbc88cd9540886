/* One of the three objects of SkeletonLinkTest's program (skel_link_main.c, skel_link_blur.c): loop nests in
 * an object of their own. A 2D 5-point stencil over G into H (two loops deep) and a 3D 7-point stencil over V
 * into W (three loops deep), each a noinline function main calls once; it prints nothing, main prints a value
 * of H and of W. What it does not cover: nests under a guard or with calls (declined: "Loop nests" in
 * docs/compiled-in.md). */
#define N 40
#define M 12
double G[N][N], H[N][N];
double V[M][M][M], W[M][M][M];

__attribute__((noinline)) void stencil2d(void) {
    for (int i = 1; i < N - 1; i++)
        for (int j = 1; j < N - 1; j++)
            H[i][j] = (G[i - 1][j] + G[i + 1][j] + G[i][j - 1] + G[i][j + 1]) * 0.25;
}

__attribute__((noinline)) void stencil3d(void) {
    for (long i = 1; i < M - 1; i++)
        for (long j = 1; j < M - 1; j++)
            for (long k = 1; k < M - 1; k++)
                W[i][j][k] = V[i - 1][j][k] + V[i + 1][j][k] + V[i][j - 1][k] + V[i][j + 1][k] + V[i][j][k - 1] + V[i][j][k + 1];
}
