/*
 * period_probe.c: codec 8's writer (agent/runtime/rt_period.c) alone, for FusedRoundTripTest, as fused_probe.c
 * is codec 7's. Reads chunks of
 * slot words on stdin and writes what the runtime would hand zstd for each, one encoder (one table) for them
 * all, as the runtime's writer thread encodes the chunks of every thread in turn:
 *
 *   in:   per chunk  u32 events_only, u32 split, u32 words, then the u64 words (the first `split` of them
 *                    packed by one period_pack call, the rest by a second: a buffer's tail and the next head)
 *   out:  per chunk  u64 payload length, the payload, u64 records, u64 dropped, u64 tag and event slots
 *
 * What it gets wrong: nothing is checked here; the test decodes the payloads with the Java reader and compares.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "rt_period.h"

int main(void)
{
    struct period fz = {0};
    fz.table = calloc((size_t)1 << FUSED_BITS, sizeof(uint64_t));
    fz.touched = calloc((size_t)1 << FUSED_BITS, sizeof(uint32_t));
    uint32_t head[3];
    while (fread(head, sizeof head, 1, stdin) == 1) {
        size_t n = head[2], slots = n / 2 + 4096;
        fz.dd = malloc(slots * sizeof(uint64_t));
        uint64_t *w = malloc(n * 8 + 8);
        if (fread(w, 8, n, stdin) != n) return 2;
        uint8_t *c = malloc(period_room_ct(slots)), *t = malloc(period_room_ct(slots)), *v = malloc(period_room_v(slots));
        uint8_t *payload = malloc(2 * period_room_ct(slots) + period_room_v(slots) + 64);
        period_begin(&fz, c, t, v);
        period_pack(&fz, w, w + head[1], (int)head[0]);
        period_pack(&fz, w + head[1], w + n, (int)head[0]);
        uint64_t len = period_end(&fz, payload);
        uint64_t counts[3] = {fz.records, fz.dropped, fz.slots};
        fwrite(&len, 8, 1, stdout);
        fwrite(payload, 1, len, stdout);
        fwrite(counts, 8, 3, stdout);
        free(w), free(c), free(t), free(v), free(payload), free(fz.dd);
    }
    return 0;
}
