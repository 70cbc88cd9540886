/*
 * Loops whose blocks gcc lays out away from the loop's straight code (docs/compiled-in.md, "Skeleton
 * loops"): a return or a goto from the middle of the body, whose block gcc -Os compiles inside the loop's
 * range (ending in a ret), and a cold block (__builtin_expect) that gcc -O1/-O2 place after the function's
 * ret, from where it jumps back into the body. The data: a[i] = i * 7919 % 1000, so a[i] == a[500] first
 * at i = 500, a[i] == 77 once (i = 283), and the running sum passes 400,000 at i = 803.
 */
#include <stdio.h>
#include <stdlib.h>

long a[4096], b[4096];
static int seen;

/* returns from the middle of the body, after a store that runs in the last iteration too */
__attribute__((noinline)) long find_first(long n, long v) {
    for (long i = 0; i < n; i++) {
        b[i] = a[i] + 1;
        if (a[i] == v) { seen++; return i; }
        b[i + 1] = a[i] * 3;
    }
    return -1;
}

/* leaves by a goto from the middle of the body */
__attribute__((noinline)) long scan(long n, long v) {
    long s = 0;
    for (long i = 0; i < n; i++) {
        s += a[i];
        if (s > v) { b[0] = s; goto out; }
        b[i] = s;
    }
    return 0;
out:
    return s * 2;
}

/* a block the compiler expects not to run, laid out after the function's return */
__attribute__((noinline)) long cold(long n) {
    long s = 0;
    for (long i = 0; i < n; i++) {
        if (__builtin_expect(a[i] == 77, 0)) { b[i] = a[i + 1] * 5; s += b[i]; }
        s += a[i];
        b[i + 2] = s;
    }
    return s;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000;
    for (long i = 0; i < 4096; i++) a[i] = i * 7919 % 1000;
    long f = find_first(n, a[n / 2]);
    long s = scan(n, 400 * n);
    long c = cold(n);
    printf("%ld %d %ld %ld\n", f, seen, s, c);
    return 0;
}
