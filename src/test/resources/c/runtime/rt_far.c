/* Runtime test: n rounds of two probed loads at random 8-byte elements of one 8 MiB table (exits with status
 * 3). Nearly every difference between a site's successive addresses needs three bytes, so codecs 7, 9 and 10
 * write a token byte for nearly every record: the chunks whose zstd frame rt_codec.c makes with a small hash
 * table (rt_writer.h, FUSED_HASHLOG_DENSE). Round i's indices come from the generator below, which
 * MtrFileCodecsTest recomputes to check every address the reader gives back. */
#include <stdio.h>
#include <stdlib.h>
#include "mt_probe.h"

static long table[1 << 20];

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    unsigned s = 12345;
    long sum = 0, v;
    for (long i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        MT_LOAD8(v, &table[s >> 12]);
        sum += v;
        MT_LOAD8(v, &table[s >> 2 & 0xfffff]);
        sum += v;
    }
    printf("SUM %ld\n", sum);
    return 3;
}
