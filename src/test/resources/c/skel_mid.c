/*
 * Loops entered in the middle of their body, for the skeleton tests (SkeletonTraceTest, SkeletonEmitTest):
 * gcc rotates a loop whose test it does not copy in front of it into `jmp .Ltest; .Lbody: ...; .Ltest:
 * <test>; j<cc> .Lbody`, so a run's first iteration starts at the test, in the middle of the body
 * (docs/compiled-in.md, "Skeleton loops"). keep_while's test calls a function (gcc -O2: the jump goes to
 * the load and the call), two_tests's has two conditions (-O2: a conditional jump enters at the load of the
 * second), ifbody has an if in the body. The data: a[i] = i % 3 for i < n (main's argument, 1000), -1 from
 * there on; keep says yes except to 5, which a never holds.
 */
#include <stdio.h>
#include <stdlib.h>

long a[4096], b[4096], c[4096];

long keep(long x) { return x != 5; }

/* the test calls: stops at i >= n after n / 2 iterations of two loads and two stores */
__attribute__((noinline)) long keep_while(long *p, long *r, long n, long (*f)(long)) {
    long i = 0;
    while (f(p[i]) && i < n) {
        r[i] = p[i] + 1;
        r[i + 1] = p[i + 2];
        i += 2;
    }
    return i;
}

/* two tests, the second on loaded data: p never holds 3, so n iterations */
__attribute__((noinline)) long two_tests(long *p, long *r, long *q, long n) {
    long i = 0;
    while (i < n && p[i] != 3) {
        r[i] = p[i] + 1;
        q[i] = r[i + 1] + p[i + 1];
        q[i + 2] = r[i + 3];
        i++;
    }
    return i;
}

/* an if in the body */
__attribute__((noinline)) long ifbody(long *p, long *r, long n) {
    long s = 0;
    for (long i = 0; i < n; i++) {
        if (p[i] & 1) {
            r[i] = s;
            s += p[i + 1];
        } else {
            s -= r[i + 2];
        }
    }
    return s;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000;
    for (long i = 0; i < 4096; i++) a[i] = i < n ? i % 3 : -1;
    long x = keep_while(a, b, n, keep);
    long y = two_tests(a, c, b, n);
    long z = ifbody(a, b, n);
    printf("%ld %ld %ld\n", x, y, z);
    return 0;
}
