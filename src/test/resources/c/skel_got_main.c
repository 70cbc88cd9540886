/*
 * GOT loads inside and outside loops of a PIE, for the skeleton build's replay to match the full build's:
 * fill_kept loads qsort's GOT slot in every iteration (libc's: the link keeps the load), fill_relaxed
 * got_local's (got_other.c, in the program: the link relaxes it into a lea that reads nothing), main takes
 * printf's once. Built -O1 -fno-tree-loop-im -fno-move-loop-invariants, or gcc hoists the loads out of the
 * loops; SkeletonGotLoadTest compiles it -fPIC, so sink's slot is loaded too, and relaxed by the PIE's
 * link. scale is an affine loop without GOT loads, which the skeleton computes. bump is skel_got_lib.c's.
 */
#include <stdio.h>
#include <stdlib.h>

void *got_local(void);
void bump(int *b, int *c, int *d, int n);

void *volatile sink;

__attribute__((noinline)) void fill_kept(void **fp, long *a, long *b, int n) {
    for (int i = 0; i < n; i++) {
        a[i] = i;
        b[i] = 2 * i;
        fp[i] = (void *) qsort;
    }
}

__attribute__((noinline)) void fill_relaxed(void **fp, long *a, long *b, int n) {
    for (int i = 0; i < n; i++) {
        a[i] = i;
        b[i] = 3 * i;
        fp[i] = (void *) got_local;
    }
}

__attribute__((noinline)) void scale(long *a, long *b, int n) {
    for (int i = 0; i < n; i++) a[i] += 2 * b[i];
}

int main(void) {
    enum { N = 50 };
    void **fp = malloc(N * sizeof *fp);
    long *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    int *c = calloc(N, sizeof *c), *d = calloc(N, sizeof *d), *e = calloc(N, sizeof *e);
    sink = (void *) printf;
    fill_kept(fp, a, b, N);
    fill_relaxed(fp, a, b, N);
    scale(a, b, N);
    bump(c, d, e, N);
    long s = 0;
    for (int i = 0; i < N; i++) s += a[i] + c[i] + d[i] + e[i] + (fp[i] == (void *) got_local);
    printf("%ld\n", s);
    free(fp); free(a); free(b); free(c); free(d); free(e);
    return 0;
}
