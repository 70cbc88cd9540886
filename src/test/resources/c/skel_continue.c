/* Loops with a continue, for the skeleton tests (SkeletonTraceTest), at -O1, -Os and -O2: gcc makes the
 * continue, or the test of a break, a second jump back to the loop's start, which ends the iteration early;
 * what follows it in the body runs in some iterations only. until_zero sums up to a zero in one array (a break whose
 * test gcc -O1 turns into a second back edge); skip leaves out odd elements (a continue); walk's continue
 * sits after the index update. Counts are passed from main through argc so that gcc cannot specialize. */
#include <stdio.h>
#define N 1000
static long a[N + 8], b[N + 8];
__attribute__((noinline)) long until_zero(const long *p, const long *q, long n) {
    long s = 0;
    for (long i = 0; i < n; i++) { if (p[i] == 0 && i > 3) break; s += p[i] * q[i] + q[i + 1] - q[i + 2]; }
    return s;
}
__attribute__((noinline)) long skip(const long *p, long *q, long n) {
    long s = 0;
    for (long i = 0; i < n; i++) {
        if (p[i] & 1) continue;
        q[i] = s;
        s += p[i + 1];
    }
    return s;
}
__attribute__((noinline)) long walk(const long *p, long n) {
    long s = 0, i = 0;
    while (i < n) {
        long v = p[i];
        i += 2;
        if (v % 3 == 0) continue;
        s += v * p[i - 1];
    }
    return s;
}
int main(int argc, char **argv) {
    long n = argc > 5 ? 5 : N;
    for (long i = 0; i < n; i++) a[i] = i % 11 + (i * 7919) % 5;
    a[700] = 0;
    long s = until_zero(a, b, n) + until_zero(a, b, 3) + skip(a, b, n) + skip(a, b, 0) + walk(a, n) + walk(a, 1);
    printf("%ld\n", s);
    return 0;
}
