/* Cache-unfriendly: naive i-j-k product of two 64x64 double matrices (B is walked by column). */
#include <stdio.h>
#define N 64
double a[N][N], b[N][N], c[N][N];
int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            a[i][j] = i + j;
            b[i][j] = i - j;
        }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < N; k++) s += a[i][k] * b[k][j];
            c[i][j] = s;
        }
    printf("%f\n", c[N - 1][N - 1]);
    return 0;
}
