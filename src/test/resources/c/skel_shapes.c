/* Loop shapes for the skeleton tests (SkeletonTraceTest), each at -O1, -Os and -O2: a while loop gcc
 * enters by a jump to its bottom test (-O1 rotates it; -Os tests it at the top and jumps back), a search
 * whose exit depends on the data (declined: its records would cost more than they save), a 32-bit counter
 * (gcc turns it into a pointer at -O1/-O2, keeps it and sign-extends at -Os) and a break. Called with
 * counts 0, 7 and N so that runs with no iteration, a few and many all occur. */
#include <stdio.h>
#define N 300
static long a[N], b[N];
static int c[N];
/* while loop with its test at the bottom, entered by a jump (-O1, -Os) */
__attribute__((noinline)) long wsum(const long *p, long n) { long s = 0, i = 0; while (i < n) { s += p[i]; i += 3; } return s; }
/* search: exit depends on the data */
__attribute__((noinline)) long find(const long *p, long v) { long i = 0; while (p[i] < v) i++; return i; }
/* 32-bit counter */
__attribute__((noinline)) long isum(const int *p, int n) { long s = 0; for (int i = 0; i < n; i += 2) s += p[i] * p[i + 1]; return s; }
/* break */
__attribute__((noinline)) long brk(const long *p, long n) { long s = 0; for (long i = 0; i < n; i++) { if (p[i] > 250) break; s += p[i]; } return s; }
int main(int argc, char **argv) {
    long n = argc > 5 ? 5 : N;
    for (long i = 0; i < n; i++) { a[i] = i; b[i] = 3 * i; c[i] = (int) i; }
    long r = wsum(a, n) + wsum(b, 0) + wsum(b, 7) + find(a, 77) + find(b, 2) + isum(c, (int) n) + brk(a, n);
    printf("%ld\n", r);
    return 0;
}
