/*
 * reportwalk.c: a fixture for memtrace report. It makes accesses whose counts follow from the code, so the
 * report's tables can be checked against the MadT trace of the same run:
 *   - table (global, 256 ints): 256 stores, then 2 x 256 loads;
 *   - three 528-byte blocks from one malloc call site, walked word by word (132 ints each) by findDisparity;
 *   - one 64-byte block freed, then read once and written once (two accesses to freed memory).
 * What it gets wrong: nothing it reports is checked by itself; the numbers live in the test.
 */
#include <stdio.h>
#include <stdlib.h>

int table[256];
volatile int sink;

static int *block(void) { return malloc(528); }

__attribute__((noinline)) static int findDisparity(int *a, int *b, int *c) {
    int d = 0;
    for (int i = 0; i < 132; i++) d += a[i] - b[i] + c[i];
    return d;
}

int main(void) {
    for (int i = 0; i < 256; i++) table[i] = i;
    int sum = 0;
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 256; i++) sum += table[i];
    int *a = block(), *b = block(), *c = block();
    for (int i = 0; i < 132; i++) { a[i] = i; b[i] = 2 * i; c[i] = 3 * i; }
    sum += findDisparity(a, b, c);
    volatile int *gone = malloc(64);   /* volatile: the compiler keeps every access, even after free */
    gone[0] = 1;
    free((void *)gone);
    sink = gone[3];
    gone[5] = 7;
    free(a); free(b); free(c);
    printf("%d\n", sum);
    return 0;
}
