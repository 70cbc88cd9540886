/* Loops that call functions, for the skeleton tests (SkeletonTraceTest), at -O1, -Os and -O2. The callee's
 * probes log its own accesses; a call's record (its return address) says where they start, the loop's next
 * record where they end, and the loop's pointers live in callee-saved registers, so the loop's accesses
 * around the call are computed. mix calls a function with accesses of its own; nest one with a skeleton
 * loop of its own; churn calls malloc and free (their events come inside the loop's run); tree calls
 * itself from under an if, so the same loop runs inside its own run. Counts are passed from main through
 * argc so that gcc cannot unroll or specialize the loops. */
#include <stdio.h>
#include <stdlib.h>
#define N 1000
static long a[N + 8], b[N + 8], c[N + 8];
static long acc;
static long *last;
__attribute__((noinline)) long tally(long x) { acc += x; return acc & 7; }
__attribute__((noinline)) void bump(long *p, long n) { for (long i = 0; i < n; i++) p[i] += 1; }
__attribute__((noinline)) long mix(long *x, const long *y, const long *z, long n) {
    long s = 0;
    for (long i = 0; i < n; i++) { x[i] = y[i] + z[i]; s += tally(x[i]); }
    return s;
}
__attribute__((noinline)) void nest(long *x, long *y, long *z, long n) {
    for (long i = 0; i < n; i++) { x[i] = y[i + 1]; bump(z + i, 8); y[i] = z[i + 2]; }
}
__attribute__((noinline)) long churn(long *x, const long *y, long n) {
    long s = 0;
    for (long i = 0; i < n; i++) {
        long *p = malloc(4 * sizeof *p);
        x[i] = y[i] + y[i + 1];
        p[1] = x[i];
        s += p[1];
        free(last);
        last = p;
    }
    return s;
}
__attribute__((noinline)) long tree(const long *p, long n) {
    long s = 0;
    for (long i = 0; i < n; i++) {
        s += p[i] * p[i + 1];
        if (i == 0 && n > 1) s += tree(p + 1, n / 2);
    }
    return s;
}
int main(int argc, char **argv) {
    long n = argc > 5 ? 5 : N;
    for (long i = 0; i < n; i++) { b[i] = i; c[i] = 3 * i; }
    long s = mix(a, b, c, n);
    nest(a, b, c, n / 10);
    s += churn(a, b, n / 20) + tree(b, 64);
    free(last);
    printf("%ld %ld\n", s, acc);
    return 0;
}
