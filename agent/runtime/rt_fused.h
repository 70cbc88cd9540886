/*
 * rt_fused.h: codec 7, the fused encoder (rt_fused.c): one pass from a thread's 16-byte slots to three byte
 * streams that one zstd frame then compresses (docs/trace-format.md, "Codec 7"). Pure: no runtime state, so
 * a bench harness can link it alone.
 */
#ifndef RT_FUSED_H
#define RT_FUSED_H
#include <stddef.h>
#include <stdint.h>

#define FUSED_BITS 16 /* table entries: 1 << FUSED_BITS, 4 words each */
#define FUSED_G0 6    /* the granule of an entry no record of the chunk has set */

/* The model's context: the table entry of a site. The reader (FusedSlots.java) computes the same. */
static inline size_t fused_entry(uint64_t site) { return (size_t)((site * 0x9E3779B97F4A7C15ULL) >> (64 - FUSED_BITS)); }

/* The encoder's table and where one chunk stands between its runs of slots (a buffer's tail, the next head). */
struct fused {
    uint64_t *table;            /* 4 << FUSED_BITS words, zero where a chunk starts */
    uint32_t *touched;          /* the entries this chunk may have set, 1 << FUSED_BITS */
    size_t ntouched;
    uint8_t *c, *t, *v;         /* the three streams being written (room: see fused_room) */
    uint8_t *c0, *t0, *v0;      /* where they start */
    uint64_t site, last, stride, run;
    size_t h;
    uint64_t records, dropped;  /* of the chunk */
    size_t slots;               /* tag and event slots of the chunk */
};

/* Bytes each stream may need for n slots: the run stream (c) and the token stream (t) one per slot and a */
/* final run, the rest (v) 20 per slot (a token's high bits, a site's difference).                        */
static inline size_t fused_room_ct(size_t slots) { return slots + 16; }
static inline size_t fused_room_v(size_t slots) { return 20 * slots + 16; }

/* Starts a chunk: clears what the last one set; the streams go to c, t and v. */
void fused_begin(struct fused *x, uint8_t *c, uint8_t *t, uint8_t *v);
/* Slots [in, end) of the chunk (events_only: access records are dropped, counted). */
void fused_pack(struct fused *x, const uint64_t *in, const uint64_t *end, int events_only);
/* Ends the chunk: the payload before zstd (header, c, t, v) into dst; returns its length. */
size_t fused_end(struct fused *x, uint8_t *dst);

#endif
