/* The rewriter's exact-record fixture: a loop over a global array, a leaf call and a TLS variable.
   Prints the results and the run-time addresses of the array and of the TLS variable. */
#include <stdio.h>

int table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
__thread int tv = 7;

__attribute__((noinline)) int sum(void) { int s = 0; for (int i = 0; i < 8; i++) s += table[i]; return s; }
__attribute__((noinline)) int leaf(int x) { return x + 1; }
__attribute__((noinline)) int tls(void) { return tv; }

int main(void) {
    int s = sum();
    int l = leaf(s);
    int t = tls();
    printf("%d %d %d %p %p\n", s, l, t, (void *) table, (void *) &tv);
    return s == 36 ? 3 : 1;
}
