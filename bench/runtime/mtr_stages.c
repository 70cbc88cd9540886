/*
 * mtr_stages.c: codec 7's or 9's encoder (agent/runtime/rt_fused.c) and zstd, stage by stage, on a real
 * program's slots: the chunks of a trace written with MEMTRACE_CODEC=0 (stored slots, one chunk a buffer).
 * Prints, per record, the encoding pass's and zstd's thread CPU time (fastest of 3 passes over the chunks),
 * the bytes before zstd (all, the run stream c, the token stream t) and after it, and a checksum of the payloads
 * before zstd (two builds of rt_fused.c that must write the same bytes print the same one).
 *
 *     MEMTRACE_CODEC=0 MEMTRACE_OUT=raw.mtr ./prog
 *     gcc -O2 -Iagent/runtime -o /tmp/mtr_stages bench/runtime/mtr_stages.c agent/runtime/rt_fused.c -lzstd
 *     /tmp/mtr_stages raw.mtr CODEC FIRST COUNT [MODE [KEEP]]
 *
 * FIRST, COUNT: the chunks encoded (from 0; skip a program's start-up to see its steady state). MODE: `all`
 * (zstd of the whole payload, as the runtime), `ct` (zstd of the header, c and t alone), `v` (of v alone).
 * KEEP > 0: only the access records of the KEEP commonest sites of the last chunk read are kept (tags as they
 * are), so that a loop's cost can be told from what surrounds it (spmv, KEEP 3: its inner loop without the
 * row ends and the other loops).
 * zstd's parameters are the runtime's (level -3, its default shortest match and hash table) unless the
 * environment sets MTR_ZLEVEL, MTR_MINMATCH or MTR_HASHLOG (bench/results/encoder.md, 2026-12-07 14:10).
 *
 * What it gets wrong: chunks are buffers (codec 0 plans no cuts), not the runtime's planned chunks; every
 * chunk is read from memory the harness filled, not from a buffer another core just wrote; zstd is the system
 * libzstd, not the runtime's static copy; planning and the write are not here.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>
#include "rt_fused.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Keeps the records of the `keep` commonest sites of w[0, n) words in each chunk; tags and their slots stay. */
static size_t filter(uint64_t *q, size_t n, const uint64_t *sites, int keep)
{
    uint64_t *o = q;
    for (size_t j = 0; j < n;) {
        if (q[j + 1] >> 63) {
            size_t m = fz_tag_words(q + j, q + n);
            memmove(o, q + j, 8 * m);
            o += m;
            j += m;
            continue;
        }
        for (int k = 0; k < keep; k++)
            if (q[j + 1] == sites[k]) {
                o[0] = q[j];
                o[1] = q[j + 1];
                o += 2;
                break;
            }
        j += 2;
    }
    return (size_t)(o - q);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: mtr_stages RAW.mtr CODEC FIRST COUNT [all|ct|v [KEEP]]\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        fprintf(stderr, "mtr_stages: cannot open %s\n", argv[1]);
        return 1;
    }
    int codec = atoi(argv[2]);
    long first = atol(argv[3]), count = atol(argv[4]);
    const char *mode = argc > 5 ? argv[5] : "all";
    int keep = argc > 6 ? atoi(argv[6]) : 0;
    uint8_t hdr[40];
    uint64_t **chs = calloc((size_t)count, sizeof *chs);
    size_t *words = calloc((size_t)count, sizeof *words);
    long nch = 0;
    fseek(f, 64, SEEK_SET);
    for (long i = 0; nch < count && fread(hdr, 1, 40, f) == 40; i++) {
        uint32_t magic, stored, c0;
        memcpy(&magic, hdr, 4);
        memcpy(&stored, hdr + 16, 4);
        memcpy(&c0, hdr + 24, 4);
        if (magic != 0x4b4e4843u || c0 != 0) {
            fprintf(stderr, "mtr_stages: %s is not a trace of stored chunks (MEMTRACE_CODEC=0)\n", argv[1]);
            return 1;
        }
        size_t padded = (stored + 7) & ~(size_t)7;
        if (i < first) {
            fseek(f, (long)padded, SEEK_CUR);
            continue;
        }
        chs[nch] = malloc(padded);
        if (fread(chs[nch], 1, padded, f) != padded) break;
        words[nch++] = stored / 8;
    }
    if (keep > 0 && nch) { /* the commonest sites of the last chunk */
        uint64_t sites[256], best[64];
        size_t seen[256];
        int ns = 0;
        const uint64_t *w = chs[nch - 1];
        for (size_t j = 0; j + 1 < words[nch - 1]; j += 2) {
            if (w[j + 1] >> 63) continue;
            int k = 0;
            while (k < ns && sites[k] != w[j + 1]) k++;
            if (k == ns && ns < 256) sites[ns] = w[j + 1], seen[ns++] = 0;
            if (k < 256) seen[k]++;
        }
        if (keep > 64) keep = 64;
        for (int k = 0; k < keep; k++) {
            int b = 0;
            for (int j = 1; j < ns; j++)
                if (seen[j] > seen[b]) b = j;
            best[k] = sites[b];
            seen[b] = 0;
        }
        for (long i = 0; i < nch; i++) words[i] = filter(chs[i], words[i], best, keep);
    }
    struct fused fz = {0};
    fz.table = calloc((size_t)5 << FUSED_BITS, 8);
    fz.touched = calloc((size_t)1 << FUSED_BITS, 4);
    size_t room = 0;
    for (long i = 0; i < nch; i++)
        if (words[i] / 2 > room) room = words[i] / 2;
    room += 4096;
    uint8_t *c = malloc(fused_room_ct(room)), *t = malloc(fused_room_ct(room));
    uint8_t *p = malloc(fused_room_head(room) + fused_room_v(room) + 64);
    size_t zcap = ZSTD_compressBound(fused_room_head(room) + fused_room_v(room));
    uint8_t *z = malloc(zcap);
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 1);
    /* rt_writer.h's ZLEVEL_FUSED and FUSED_MINMATCH, or MTR_ZLEVEL, MTR_MINMATCH and MTR_HASHLOG (0: zstd's default) */
    const char *zl = getenv("MTR_ZLEVEL"), *mm = getenv("MTR_MINMATCH"), *hl = getenv("MTR_HASHLOG");
    ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, zl ? atoi(zl) : -3);
    ZSTD_CCtx_setParameter(cc, ZSTD_c_minMatch, mm ? atoi(mm) : 0);
    ZSTD_CCtx_setParameter(cc, ZSTD_c_hashLog, hl ? atoi(hl) : 0);
    double tpack = 1e9, tz = 1e9;
    size_t records = 0, in = 0, out = 0, nc = 0, nt = 0;
    uint64_t sum = 0; /* FNV-1a of every payload before zstd: two builds of the encoder write the same bytes */
    for (int rep = 0; rep < 3; rep++) {
        double a = 0, b = 0;
        records = in = out = nc = nt = 0;
        sum = 0xcbf29ce484222325ULL;
        for (long i = 0; i < nch; i++) {
            double t0 = now();
            fused_begin(&fz, c, t, p + fused_room_head(room), codec);
            fused_pack(&fz, chs[i], chs[i] + words[i], 0);
            size_t len;
            uint8_t *pl = fused_end_at_v(&fz, &len);
            double t1 = now();
            a += t1 - t0;
            for (size_t j = 0; j < len; j++) sum = (sum ^ pl[j]) * 0x100000001b3ULL;
            t1 = now(); /* the checksum is no stage's time */
            size_t nv = (size_t)(fz.v - fz.v0);
            const uint8_t *zin = mode[0] == 'v' ? fz.v0 : pl;
            size_t zlen = mode[0] == 'v' ? nv : mode[0] == 'c' ? len - nv : len;
            size_t zz = ZSTD_compress2(cc, z, zcap, zin, zlen);
            b += now() - t1;
            records += fz.records;
            in += len;
            out += zz;
            nc += (size_t)(fz.c - fz.c0);
            nt += (size_t)(fz.t - fz.t0);
        }
        if (a < tpack) tpack = a;
        if (b < tz) tz = b;
    }
    if (!records) {
        fprintf(stderr, "mtr_stages: no access records in chunks %ld..%ld\n", first, first + count - 1);
        return 1;
    }
    printf("codec %d, %ld chunks, %zu records: pack %.3f ns/record (%.1f ms), zstd (%s) %.3f ns/record (%.1f ms); "
           "before zstd %.3f B/record (c %.3f, t %.3f), after %.4f; payloads' FNV-1a %016llx\n",
           codec, nch, records, tpack * 1e9 / records, tpack * 1e3, mode, tz * 1e9 / records, tz * 1e3,
           (double)in / records, (double)nc / records, (double)nt / records, (double)out / records, (unsigned long long)sum);
    return 0;
}
