/*
 * Loops whose ifs test the loop's own counters (skel_cond.c, SkeletonTraceTest): a skeleton build computes
 * those conditions in the replay instead of logging a marker each time the block runs. below_k's
 * `if (i < k)`, odd's `if (i & 1)`, tri's triangular `if (j <= i)` (its inner loop over j), edges' boundary
 * `if (i > 0 && i < n - 1)`, positive's `if (a[i] > 0)` (on data: a marker), narrow's 32-bit `int` counter
 * compared at 32 bits. Output: one line of sums, so the compiler keeps every loop.
 */
#include <stdio.h>

#define N 1000
static long a[N], b[N], c[N];
static int w[N], v[N];

__attribute__((noinline)) void below_k(long *p, const long *q, long n, long k)
{
    for (long i = 0; i < n; i++) {
        p[i] = q[i] + 1;
        if (i < k) p[i + 1] = q[i] * 3;
    }
}

__attribute__((noinline)) void odd(long *p, const long *q, long n)
{
    for (long i = 0; i < n; i++) {
        p[i] += 2;
        if (i & 1) p[i] = q[i] - 5;
    }
}

__attribute__((noinline)) void tri(long *p, const long *q, long n, long i)
{
    for (long j = 0; j < n; j++) {
        p[j] = q[j] + j;
        if (j <= i) p[j] += q[i];
    }
}

__attribute__((noinline)) void edges(long *p, const long *q, long n)
{
    for (long i = 0; i < n; i++) {
        p[i] = 0;
        if (i > 0 && i < n - 1) p[i] = q[i - 1] + q[i + 1];
    }
}

__attribute__((noinline)) void positive(long *p, const long *q, long *r, long n)
{
    for (long i = 0; i < n; i++) {
        p[i] = 1;
        if (q[i] > 0) r[i] = q[i] + p[i + 1];
    }
}

__attribute__((noinline)) void narrow(int *p, int *q, int n, int k)
{
    for (int i = 0; i < n; i++) {
        p[i] += 1;
        if (i != k) q[i] = p[i] * 2;
    }
}

int main(void)
{
    for (long i = 0; i < N; i++) { b[i] = (i * 2654435761u >> 7) % 9 - 4; w[i] = (int) i; }
    below_k(a, b, N - 1, 300);
    odd(a, b, N);
    for (long i = 0; i < 40; i++) tri(c, b, 100, i);
    edges(c, b, N);
    positive(a, b, c, N - 1);
    narrow(w, v, N, 500);
    long s = 0;
    for (long i = 0; i < N; i++) s += a[i] + c[i] + w[i] + v[i];
    printf("%ld\n", s);
    return 0;
}
