/* Kernels for the skeleton tests (SkeletonTraceTest): regular loops a skeleton computes (array sums,
 * a stencil, a matrix multiply's inner loop), loops with an if in the body (a conditional block whose
 * accesses a marker places, two of them, one with an access that depends on a load, and one whose loop has
 * a logged access every iteration), and loops it must leave to logging (pointer chasing, a call in the
 * body, a break), in the main thread and in two worker threads, one after the other. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N 256
#define M 24
static long la[N], lc[N];
static int ia[N + 1], ib[N + 1], ix[N];
static double A[M * M], B[M * M], C[M * M];
static double s1[N], s2[N];
struct node { struct node *next; long v; };

__attribute__((noinline)) long sum_long(const long *a, long n) { long s = 0; for (long i = 0; i < n; i++) s += a[i]; return s; }
__attribute__((noinline)) int sum_int(const int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }
__attribute__((noinline)) void stencil(double *out, const double *in, int n) {
    for (int i = 1; i < n - 1; i++) out[i] = (in[i - 1] + in[i] + in[i + 1]) / 3;
}
__attribute__((noinline)) void gemm(double *c, const double *a, const double *b, int n) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
            c[i * n + j] = s;
        }
}
__attribute__((noinline)) long branchy(const int *a, const int *b, int n) {
    long s = 0;
    for (int i = 0; i < n; i++) if (a[i] & 1) s += b[i];
    return s;
}
__attribute__((noinline)) double maxabs(const double *a, long n) {
    double m = 0;
    for (long i = 0; i < n; i++) { double v = a[i]; if (v < 0) v = -v; if (v > m) m = v; }
    return m;
}
__attribute__((noinline)) long twoifs(const int *a, const int *b, long *c, long n) {
    long s = 0;
    for (long i = 0; i < n; i++) {
        if (a[i] & 1) s += b[i];
        if (a[i] & 2) { c[i] = s; s ^= b[i + 1]; }
    }
    return s;
}
__attribute__((noinline)) long gather_if(const int *a, const int *idx, const long *t, long n) {
    long s = 0;
    for (long i = 0; i < n; i++) if (a[i] & 1) s += t[idx[i]] + a[i + 1];
    return s;
}
__attribute__((noinline)) long anchored(const int *a, const int *idx, const long *t, long n) {
    long s = 0;
    for (long i = 0; i < n; i++) { s += t[idx[i]]; if (a[i] & 4) s -= a[i + 1]; }
    return s;
}
__attribute__((noinline)) long until_zero(const long *a, long n) {
    long s = 0;
    for (long i = 0; i < n; i++) { if (a[i] == 0 && i > 3) break; s += a[i]; }
    return s;
}
__attribute__((noinline)) long chase(const struct node *p) { long s = 0; while (p) { s += p->v; p = p->next; } return s; }
__attribute__((noinline)) int twice(int x) { return 2 * x; }
__attribute__((noinline)) long calls(const int *a, int n) { long s = 0; for (int i = 0; i < n; i++) s += twice(a[i]); return s; }

static void *worker(void *arg) {
    long *v = arg, s = 0;
    for (int r = 0; r < 3; r++) s += sum_long(v, N / 2);
    return (void *) s;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : N;
    for (int i = 0; i < n; i++) { la[i] = i; ia[i] = i * 3 + i / 5; ib[i] = n - i; s1[i] = i * 0.5 - 30; ix[i] = i * 37 % n; }
    for (int i = 0; i < M * M; i++) { A[i] = i % 7; B[i] = i % 5; }
    struct node *list = 0;
    for (int i = 0; i < 50; i++) { struct node *e = malloc(sizeof *e); e->v = i; e->next = list; list = e; }
    long r = sum_long(la, n) + sum_int(ia, n);
    stencil(s2, s1, n);
    gemm(C, A, B, M);
    r += branchy(ia, ib, n) + chase(list) + calls(ia, n) + (long) C[M + 1] + (long) s2[5];
    r += (long) maxabs(s1, n) + twoifs(ia, ib, lc, n) + gather_if(ia, ix, la, n) + anchored(ia, ix, la, n) + until_zero(la, n);
    /* one worker after the other: concurrent threads interleave (and allocate) differently from run to
       run, which a comparison of two runs cannot tell from a replay error */
    for (int i = 0; i < 2; i++) {
        pthread_t t;
        void *x;
        pthread_create(&t, 0, worker, la + i * (N / 2));
        pthread_join(t, &x);
        r += (long) x;
    }
    printf("%ld\n", r);
    return 0;
}
