/* Runtime test: n rounds of probed loads at random indices into one 64 KiB table (exits with status 3): 8-byte
 * elements (a granule of 8), bytes (no granule), 64-byte lines, and a site whose alignment changes halfway
 * (multiples of 4096, then of 8, then odd offsets), so codec 6 re-grains its entries. */
#include <stdio.h>
#include <stdlib.h>
#include "mt_probe.h"

static char table[65536 + 4096 + 8];

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    unsigned s = 12345;
    long sum = 0, v;
    for (long i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        unsigned r = s >> 8;
        MT_LOAD8(v, table + 8 * (r & 8191));
        sum += v;
        MT_LOAD8(v, table + (r >> 3 & 65535));
        sum += v;
        MT_LOAD8(v, table + 64 * (r >> 5 & 1023));
        sum += v;
        long shift = i < n / 3 ? 4096 * (r & 15) : i < 2 * n / 3 ? 8 * (r & 8191) : (r & 65535);
        MT_LOAD8(v, table + shift);
        sum += v;
    }
    printf("SUM %ld\n", sum);
    return 3;
}
