/* What a skeleton loop costs (SkeletonCostTest). rows3's inner loop runs 3 iterations per entry, a constant:
 * too few for the skeleton's entry and exit records to cost less than the one access an iteration they
 * compute; rows32's runs 32 and pays (the bodies are long enough that gcc -O1/-O2 keep them as loops).
 * rowsv's runs as long as a loaded length says, so its outer loop cannot replay it whole (no nest) and it
 * is entered 4096 times, each run with its entry and exit records: with small buffers those probes often
 * fill one.
 * gather computes idx[i] and o[i] and logs t[idx[i]]: the logged one keeps its cursor in a register. */
#include <stdio.h>

#define ROWS 400
#define GATHER 4096
static long short3[ROWS][3], long32[4096][32], out[ROWS + 4096];
static int idx[GATHER], table[GATHER], picked[GATHER];
static long lens[4096], outv[4096];

static long mix(long s, long v, long w)
{
    s = s * w + v * 3 - (s >> 7);
    s ^= (v << 3) + (s >> 11) * w;
    s += (s >> 5) * (v | 1);
    return s - ((s << 2) ^ (v >> 1));
}

__attribute__((noinline)) void rows3(long *o, long (*r)[3], long n, long w)
{
    for (long i = 0; i < n; i++) {
        long s = o[i];
        for (long k = 0; k < 3; k++) s = mix(s, r[i][k], w);
        o[i] = s;
    }
}

__attribute__((noinline)) void rows32(long *o, long (*r)[32], long n, long w)
{
    for (long i = 0; i < n; i++) {
        long s = o[i];
        for (long k = 0; k < 32; k++) s = mix(s, r[i][k], w);
        o[i] = s;
    }
}

__attribute__((noinline)) void rowsv(long *o, long (*r)[32], const long *len, long n, long w)
{
    for (long i = 0; i < n; i++) {
        long s = o[i];
        for (long k = 0; k < len[i]; k++) s = mix(s, r[i][k], w);
        o[i] = s;
    }
}

__attribute__((noinline)) void gather(int *o, const int *t, const int *ix, long n)
{
    for (long i = 0; i < n; i++) o[i] = t[ix[i]];
}

int main(void)
{
    for (long i = 0; i < ROWS; i++)
        for (long k = 0; k < 3; k++) short3[i][k] = i * 3 + k;
    for (long i = 0; i < 4096; i++)
        for (long k = 0; k < 32; k++) long32[i][k] = i ^ k;
    for (long i = 0; i < 4096; i++) lens[i] = 24 + (i * 7) % 9;
    unsigned x = 12345;
    for (long i = 0; i < GATHER; i++) {
        x = x * 1103515245u + 12345u;
        idx[i] = (int) (x >> 8) % GATHER;
        table[i] = (int) i * 7;
    }
    gather(picked, table, idx, GATHER);
    rows3(out, short3, ROWS, 3);
    rows32(out + ROWS, long32, 4096, 5);
    rowsv(outv, long32, lens, 4096, 7);
    long sum = 0;
    for (long i = 0; i < ROWS + 4096; i++) sum += out[i];
    for (long i = 0; i < GATHER; i++) sum += picked[i] + outv[i];
    printf("%ld\n", sum);
    return 0;
}
