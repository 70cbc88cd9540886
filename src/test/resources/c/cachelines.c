/*
 * cachelines.c: a fixture for `memtrace cachesim --lines`. Two loops on lines of their own: one writes
 * every 16th int of a 256 KiB array (a new 64-byte line each time: misses), one reads a 1 KiB array
 * 64 times (it fits in L1: misses only on the first pass). The test finds the lines by their markers.
 * The arrays are not static: gcc would drop the stores to an array never read and fold the reads of one
 * never written.
 * What it gets wrong: nothing it prints is checked by itself; the numbers live in CacheSimLinesTest.
 */
#include <stdio.h>

int big[1 << 16] __attribute__((aligned(64)));
int small[256] __attribute__((aligned(64)));

int main(void) {
    for (int i = 0; i < (1 << 16); i += 16) big[i] = i; /* STRIDED */
    long s = 0;
    for (int r = 0; r < 64; r++)
        for (int i = 0; i < 256; i++) s += small[i]; /* SMALL */
    printf("%ld\n", s);
    return 0;
}
