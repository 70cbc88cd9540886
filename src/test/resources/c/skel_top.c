/*
 * Loops tested at the top below code of their own, as gcc -Os lays them out (docs/compiled-in.md, "Skeleton
 * loops"): `.L2: <code>; <test>; j<cc> out; <body>; jmp .L2`, where the code before the test loads what the
 * test compares (until_negative), adds to a sum (forever) or steps the counter (stepped), and runs once
 * more in the iteration the loop leaves in. At -O1/-O2 gcc rotates the same loops (a test at the bottom).
 * The data: a[i] = i % 100 for i < 1000, -1 from there on.
 */
#include <stdio.h>
#include <stdlib.h>

long a[3 * 4096], q[4096];

/* the test's load comes first: 1000 whole iterations, and the load of a[1000] in the one that leaves */
__attribute__((noinline)) long until_negative(long *p) {
    long i = 0;
    while (p[i] >= 0) {
        p[i + 4096] = p[i] * 2;
        p[i + 8192] = p[i + 1];
        i++;
    }
    return i;
}

/* a load into the sum, then the test of the counter */
__attribute__((noinline)) long forever(long *p, long *r, long n) {
    long i = 0, s = 0;
    for (;;) {
        s += p[i];
        if (i >= n) break;
        r[i + 1] = s;
        i++;
    }
    return s;
}

/* the counter steps before the test */
__attribute__((noinline)) long stepped(long *p, long *r, long n) {
    long i = 0;
    for (;;) {
        i += 2;
        if (i > n) break;
        r[i] = p[i] + p[i - 1];
    }
    return i;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000;
    for (long i = 0; i < 4096; i++) a[i] = i < n ? i % 100 : -1;
    long u = until_negative(a);
    long f = forever(a, q, n / 2);
    long s = stepped(a, q, n + 1);
    printf("%ld %ld %ld\n", u, f, s);
    return 0;
}
