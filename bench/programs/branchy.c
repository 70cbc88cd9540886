/* Regular kernel with an if in every loop body (skeleton loops of several blocks): 8 passes over 1M
 * pseudo-random elements of a thresholded copy (the stores under the if), a two-sided clamp and an
 * absolute maximum; prints a checksum. */
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 20)

__attribute__((noinline)) long threshold(long *out, const int *in, const int *w, long n, int t) {
    long s = 0;
    for (long i = 0; i < n; i++)
        if (in[i] > t) { out[i] = in[i] * 3; s += w[i]; }
    return s;
}

__attribute__((noinline)) void clamp(int *a, long n, int lo, int hi) {
    for (long i = 0; i < n; i++) {
        if (a[i] < lo) a[i] = lo;
        if (a[i] > hi) a[i] = hi;
    }
}

__attribute__((noinline)) double maxabs(const double *a, long n) {
    double m = 0;
    for (long i = 0; i < n; i++) { double v = a[i]; if (v < 0) v = -v; if (v > m) m = v; }
    return m;
}

int main(void) {
    int *in = malloc(sizeof(int) * N), *w = malloc(sizeof(int) * N);
    long *out = calloc(N, sizeof(long));
    double *d = malloc(sizeof(double) * N);
    if (!in || !w || !out || !d) return 1;
    unsigned long x = 88172645463325252ul; /* xorshift64: branch outcomes that follow the data, as real ones do */
    for (long i = 0; i < N; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        in[i] = (int) (x % 1000);
        w[i] = (int) (i % 7);
        d[i] = (i % 101) - 50.5;
    }
    long s = 0;
    double m = 0;
    for (int pass = 0; pass < 8; pass++) {
        s += threshold(out, in, w, N, 500 + pass);
        clamp(in, N, 10 + pass, 990 - pass);
        m += maxabs(d, N);
    }
    printf("%ld %ld %.1f\n", s, out[12345], m);
    free(in);
    free(w);
    free(out);
    free(d);
    return 0;
}
