/* What a skeleton loop costs (SkeletonCostTest). rows3's inner loop runs 3 iterations per entry, a constant:
 * too few for the skeleton's entry and exit records to cost less than the one access an iteration they
 * compute; rows512's runs 512 and pays (the bodies are long enough that gcc -O1/-O2 keep them as loops).
 * gather computes idx[i] and o[i] and logs t[idx[i]]: the logged one keeps its cursor in a register. */
#include <stdio.h>

#define ROWS 400
#define GATHER 4096
static long short3[ROWS][3], long512[4][512], out[ROWS + 4];
static int idx[GATHER], table[GATHER], picked[GATHER];

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

__attribute__((noinline)) void rows512(long *o, long (*r)[512], long n, long w)
{
    for (long i = 0; i < n; i++) {
        long s = o[i];
        for (long k = 0; k < 512; k++) s = mix(s, r[i][k], w);
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
    for (long i = 0; i < 4; i++)
        for (long k = 0; k < 512; k++) long512[i][k] = i ^ k;
    unsigned x = 12345;
    for (long i = 0; i < GATHER; i++) {
        x = x * 1103515245u + 12345u;
        idx[i] = (int) (x >> 8) % GATHER;
        table[i] = (int) i * 7;
    }
    gather(picked, table, idx, GATHER);
    rows3(out, short3, ROWS, 3);
    rows512(out + ROWS, long512, 4, 5);
    long sum = 0;
    for (long i = 0; i < ROWS + 4; i++) sum += out[i];
    for (long i = 0; i < GATHER; i++) sum += picked[i];
    printf("%ld\n", sum);
    return 0;
}
