/* A position-dependent executable linked low (-Wl,-Ttext-segment=0x10000), so its trampolines cannot go below
 * it (RewriteNonPieTest): fill stores N elements of a global array, total loads them. */
#include <stdio.h>

#define N 1000
long cells[N];

__attribute__((noinline)) void fill(void)
{
    for (long i = 0; i < N; i++) cells[i] = i;
}

__attribute__((noinline)) long total(void)
{
    long s = 0;
    for (long i = 0; i < N; i++) s += cells[i];
    return s;
}

int main(void)
{
    fill();
    printf("%ld\n", total());
    return 0;
}
