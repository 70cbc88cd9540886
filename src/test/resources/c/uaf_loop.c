/* uaf_loop.c: a use after free inside a loop that keeps its probes' cursor in a register (docs/compiled-in.md,
 * "A loop's cursor"), for AccessStackTest's `memtrace cc` case: sum's loop reads the block main freed, so the
 * first execution of its armed probe, while the loop's register still equals the cursor in memory, is the
 * first use after free and must carry sum's callers; the 63 after it follow in the loop's register. */
#include <stdlib.h>

__attribute__((noinline)) long sum(const long *p, long n) {
    long s = 0;
    for (long i = 0; i < n; i++) s += p[i];
    return s;
}

int main(void) {
    long *p = malloc(64 * sizeof *p);
    for (long i = 0; i < 64; i++) p[i] = i;
    free(p);
    volatile long s = sum(p, 64);
    (void)s;
    return 0;
}
