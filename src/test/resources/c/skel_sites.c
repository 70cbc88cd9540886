/* A program of many hot sites for SkeletonSitesTest: a thousand small functions (two accesses each, one a
 * read-modify-write) called in a pseudo-random order, after a fill a skeleton build computes. Codec 4 hashed
 * every site into 4,096 table entries: with thousands of sites live in a chunk, sites collided, lost their
 * predicted successor and previous address, and since the skeleton build's code (so its sites' addresses)
 * lies elsewhere, the two builds' traces collided differently and differed by about a percent for nothing
 * they recorded (sqlite3's skeleton trace came out 0.7 % larger than its full one). Codec 5's tables of
 * 65,536 entries hold them. Prints a checksum, so the two builds can be seen to compute the same thing.
 * What it gets wrong: nothing checks that the thousand sites are live in the same chunk (the test compares
 * codec 4 with codec 5 on it); and the fill saves less than the noise the two layouts still leave, so the
 * skeleton trace is not smaller here, only lossless. */
#include <stdio.h>
#include <stdlib.h>

#define F(i) __attribute__((noinline)) static long f##i(long *p, long x) { p[(i * 7) % 61] += x; return p[(i * 13) % 59] ^ x; }
#define F10(a) F(a##0) F(a##1) F(a##2) F(a##3) F(a##4) F(a##5) F(a##6) F(a##7) F(a##8) F(a##9)
#define F100(a) F10(a##0) F10(a##1) F10(a##2) F10(a##3) F10(a##4) F10(a##5) F10(a##6) F10(a##7) F10(a##8) F10(a##9)
#define N(i) f##i,
#define N10(a) N(a##0) N(a##1) N(a##2) N(a##3) N(a##4) N(a##5) N(a##6) N(a##7) N(a##8) N(a##9)
#define N100(a) N10(a##0) N10(a##1) N10(a##2) N10(a##3) N10(a##4) N10(a##5) N10(a##6) N10(a##7) N10(a##8) N10(a##9)
#define FUNCTIONS 1000

F100(10) F100(11) F100(12) F100(13) F100(14) F100(15) F100(16) F100(17) F100(18) F100(19)

static long (*const functions[FUNCTIONS])(long *, long) = {
    N100(10) N100(11) N100(12) N100(13) N100(14) N100(15) N100(16) N100(17) N100(18) N100(19)
};

static unsigned next_random(unsigned *x) { return *x = *x * 1103515245u + 12345u; }

int main(void) {
    long *cells = malloc(64 * sizeof *cells);
    long *fill = malloc(8192 * sizeof *fill);
    for (long i = 0; i < 8192; i++) fill[i] = 3 * i; /* computed in the skeleton build */
    for (long i = 0; i < 64; i++) cells[i] = fill[i * 17];
    unsigned x = 11;
    long total = 0;
    for (long r = 0; r < 150000; r++) total += functions[(next_random(&x) >> 10) % FUNCTIONS](cells, r);
    printf("sites %ld\n", total);
    free(fill);
    free(cells);
    return 0;
}
