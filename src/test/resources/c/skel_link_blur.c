/* One of the three objects of SkeletonLinkTest's program (skel_link_main.c, skel_link_stencil.c): loop nests in
 * an object of their own. A 3x3 box blur of an image I into B, its nine taps unrolled (two loops deep; gcc 12
 * -O2 declines its outer loop and keeps the inner loop's records), and a weighted sum over the channels of a
 * rows × columns × 3 cube P into Q (three loops deep in C; gcc unrolls the channel loop). It prints nothing;
 * main prints a value of B and of Q. What it does not cover: a blur whose taps are a loop of their own. */
#define ROWS 30
#define COLS 36
#define C 3
long I[ROWS][COLS], B[ROWS][COLS];
long P[ROWS][COLS][C], Q[ROWS][COLS];

__attribute__((noinline)) void blur(void) {
    for (long y = 1; y < ROWS - 1; y++)
        for (long x = 1; x < COLS - 1; x++)
            B[y][x] = (I[y - 1][x - 1] + I[y - 1][x] + I[y - 1][x + 1] + I[y][x - 1] + I[y][x] + I[y][x + 1]
                       + I[y + 1][x - 1] + I[y + 1][x] + I[y + 1][x + 1]) / 9;
}

__attribute__((noinline)) void channels(void) {
    for (long y = 0; y < ROWS; y++)
        for (long x = 0; x < COLS; x++)
            for (long c = 0; c < C; c++) Q[y][x] += P[y][x][c] * (c + 1);
}
