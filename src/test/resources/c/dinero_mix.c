/* Fixture for the Dinero IV comparison: a pseudo-random walk (an LCG) over a 64 KiB global of 8-byte loads
 * and stores at any byte offset, so some accesses straddle two 64-byte lines, a strided pass over the
 * same array, and a memcpy between two heap blocks. About 60,000 accesses, most of them missing a small
 * first-level cache. Prints a checksum so the work is not optimized away. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIZE (64 * 1024)
unsigned char data[SIZE] __attribute__((aligned(64)));

int main(void) {
    unsigned long x = 12345, sum = 0;
    for (int i = 0; i < 40000; i++) {
        x = x * 6364136223846793005UL + 1442695040888963407UL;
        unsigned long off = (x >> 33) % (SIZE - 8);
        unsigned long *p = (unsigned long *)(data + off);
        if (x >> 63) *p = x;
        else sum += *p;
    }
    for (int i = 0; i < SIZE; i += 72) sum += data[i];
    char *a = malloc(16384), *b = malloc(16384);
    memset(a, 1, 16384);
    memcpy(b, a, 16384);
    sum += b[100];
    printf("%lu\n", sum);
    free(a);
    free(b);
    return 0;
}
