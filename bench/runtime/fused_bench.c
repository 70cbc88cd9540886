/*
 * fused_bench.c: codec 7's encoder (agent/runtime/rt_fused.c; with -DPERIOD codec 8's, rt_period.c) alone, on
 * made-up slots, for bench/fused.sh.
 * Builds 64 buffers of 1 MB of one pattern (kind 0 spmv: two strided sites and a random index; 1 gemm: three
 * strided sites; 2 smooth: a 3x3 stencil's nine sites; 3 hash: keys in order, a table at random, a probe
 * that comes one time in two; 4 chase: a node's value and next at random), encodes them as the writer does
 * (one chunk per buffer, one table), and prints the fastest of 5 passes in thread CPU ns per record and
 * the last chunk's bytes before zstd (v written where the payload ends, as the writer does: fused_end_at_v).
 *
 * What it gets wrong: the slots are made up and encoded from memory the harness just wrote; the runtime's
 * encoder reads buffers another core filled, and zstd, planning and the write are not here.
 *
 *     fused_bench KIND [BUFFERS [CODEC]]   (CODEC 7, the default, or 9)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef PERIOD /* codec 8's encoder (rt_period.c) instead */
#include "rt_period.h"
#define fused period
#define fused_begin(x, c, t, v, codec) period_begin(x, c, t, v)
#define fused_pack period_pack
#define fused_end period_end
#define fused_room_ct period_room_ct
#define fused_room_v period_room_v
#else
#include "rt_fused.h"
#endif
static double now(void){struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t); return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc, char **argv)
{
    int kind = argc > 1 ? atoi(argv[1]) : 0;
    size_t n = 65536; /* slots of a 1 MB buffer */
    int nbufs = argc > 2 ? atoi(argv[2]) : 64;
    int codec = argc > 3 ? atoi(argv[3]) : 7; /* 9: codec 9's short tokens (not with PERIOD) */
    uint64_t *w = malloc(n * 16 * nbufs);
    uint64_t s = 88172645463325252ULL;
    for (size_t i = 0, k = 0; i < n * nbufs; k++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        if (kind == 0) { /* spmv */
            w[2*i] = 0x600000 + 8*k; w[2*i+1] = 0x401020; i++;
            w[2*i] = 0x800000 + 4*k; w[2*i+1] = 0x401034; i++;
            w[2*i] = 0xa00000 + 8*(s % 14000); w[2*i+1] = 0x40104b; i++;
        } else if (kind == 1) { /* gemm-like: 3 sites strides */
            w[2*i] = 0x600000 + 8*(k%512); w[2*i+1] = 0x401020; i++;
            w[2*i] = 0x800000 + 4096*(k%512); w[2*i+1] = 0x401034; i++;
            w[2*i] = 0xa00000 + 8*(k/512); w[2*i+1] = 0x40104b; i++;
        } else if (kind == 4) { /* chase: a node's value, then its next, at random */
            uint64_t node = 0x7ffff0000000ULL + 16*(s % (1 << 18));
            w[2*i] = node + 8; w[2*i+1] = 0x401020; i++;
            w[2*i] = node; w[2*i+1] = 0x401034; i++;
        } else if (kind == 3) { /* hash: keys in order, a table at random, a byte-sized probe */
            w[2*i] = 0x600000 + 8*k; w[2*i+1] = 0x401020; i++;
            w[2*i] = 0x10000000 + 16*(s % (1 << 20)); w[2*i+1] = 0x401034; i++;
            if (s & 1) { w[2*i] = 0x10000000 + 16*((s >> 20) % (1 << 20)) + 8; w[2*i+1] = 0x40104b; i++; }
        } else { /* smooth: 9 sites of a 3x3 stencil */
            for (int j = 0; j < 9 && i < n*nbufs; j++) { w[2*i] = 0x600000 + (k + j%3 + (j/3)*1152); w[2*i+1] = 0x401000 + 8*j; i++; }
        }
    }
    struct fused fz = {0};
    fz.table = calloc((size_t)5 << FUSED_BITS, 8);
#ifdef PERIOD
    fz.dd = calloc(n + 4096, 8);
#endif
    fz.touched = calloc((size_t)1 << FUSED_BITS, 4);
    size_t room = n + 4096;
    uint8_t *c = malloc(fused_room_ct(room)), *t = malloc(fused_room_ct(room)), *v = malloc(fused_room_v(room)), *p = malloc(2*fused_room_ct(room)+fused_room_v(room)+64);
    double best = 1e9; size_t bytes = 0;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now();
        for (int b = 0; b < nbufs; b++) {
#ifdef PERIOD
            fused_begin(&fz, c, t, v, codec);
            fused_pack(&fz, w + 2*n*b, w + 2*n*(b+1), 0);
            bytes = fused_end(&fz, p);
#else /* as the writer: v where the payload ends (rt_codec.c) */
            fused_begin(&fz, c, t, p + fused_room_head(room), codec);
            fused_pack(&fz, w + 2*n*b, w + 2*n*(b+1), 0);
            fused_end_at_v(&fz, &bytes);
#endif
        }
        double dt = now() - t0;
        if (dt < best) best = dt;
    }
    printf("kind %d: %.3f ns/record, %zu bytes last chunk\n", kind, best * 1e9 / (n * nbufs), bytes);
    return 0;
}
