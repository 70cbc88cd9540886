/*
 * fused_probe.c: codec 7's, 9's, 10's or 11's writer (agent/runtime/rt_fused.c) alone, for FusedRoundTripTest. Reads chunks of
 * slot words on stdin and writes what the runtime would hand zstd for each, one encoder (one table) for them
 * all, as the runtime's writer thread encodes the chunks of every thread in turn:
 *
 *   in:   per chunk  u32 events_only, u32 split, u32 words, then the u64 words (the first `split` of them
 *                    packed by one fused_pack call, the rest by a second: a buffer's tail and the next head)
 *   out:  per chunk  u64 payload length, the payload, u64 records, u64 dropped, u64 tag and event slots
 *
 *   fused_probe [CODEC]   (7, the default, or 9)
 *
 * What it gets wrong: nothing is checked here; the test decodes the payloads with the Java reader and compares.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "rt_fused.h"

int main(int argc, char **argv)
{
    int codec = argc > 1 ? atoi(argv[1]) : 7;
    struct fused fz = {0};
    fz.table = calloc((size_t)5 << FUSED_BITS, sizeof(uint64_t));
    fz.touched = calloc((size_t)1 << FUSED_BITS, sizeof(uint32_t));
    uint32_t head[3];
    while (fread(head, sizeof head, 1, stdin) == 1) {
        size_t n = head[2], slots = n / 2 + 4096;
        uint64_t *w = malloc(n * 8 + 8);
        if (fread(w, 8, n, stdin) != n) return 2;
        uint8_t *c = malloc(fused_room_ct(slots)), *t = malloc(fused_room_ct(slots)), *v = malloc(fused_room_v(slots));
        uint8_t *payload = malloc(2 * fused_room_ct(slots) + fused_room_v(slots) + 64);
        fused_begin(&fz, c, t, v, codec);
        fused_pack(&fz, w, w + head[1], (int)head[0]);
        fused_pack(&fz, w + head[1], w + n, (int)head[0]);
        uint64_t len = fused_end(&fz, payload);
        uint64_t counts[3] = {fz.records, fz.dropped, fz.slots};
        fwrite(&len, 8, 1, stdout);
        fwrite(payload, 1, len, stdout);
        fwrite(counts, 8, 3, stdout);
        free(w), free(c), free(t), free(v), free(payload);
    }
    return 0;
}
