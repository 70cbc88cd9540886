/*
 * rt_fused.h: codec 7, the fused encoder (rt_fused.c): one pass from a thread's 16-byte slots to three byte
 * streams that one zstd frame then compresses (docs/trace-format.md, "Codec 7"). Pure: no runtime state, so
 * a bench harness can link it alone.
 */
#ifndef RT_FUSED_H
#define RT_FUSED_H
#include <stddef.h>
#include <stdint.h>

#define FUSED_BITS 16 /* table entries: 1 << FUSED_BITS, 4 words each, then codec 10's other followers, 1 << FUSED_BITS words */
#define FUSED_MANY 2048 /* entries set by a chunk past which the next fetches entries ahead (rt_fused.c, pack10_many) */
#define FUSED_AHEAD 16  /* how many records ahead pack10_many fetches an entry (rt_fused.c, pack10_many) */
#define FUSED_G0 6    /* the granule of an entry no record of the chunk has set */

/* The run stream's low bits that say what follows a run (the writer and FusedSlots agree through it): codec 9 */
/* one (a short token), codecs 10 and 11 two (1 a short token, 2 a hit at the entry's other follower), 7 none. */
static inline int fused_shift(int codec) { return codec == 10 || codec == 11 ? 2 : codec == 9; }

/* The model's context: the table entry of a site. The reader (FusedSlots.java) computes the same. */
static inline size_t fused_entry(uint64_t site) { return (size_t)((site * 0x9E3779B97F4A7C15ULL) >> (64 - FUSED_BITS)); }

/* The streams' varints (LEB128), shared by codecs 7 and 8 (rt_period.c). */
static inline uint8_t *fz_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* put_varint without a loop for values under 2^21, most of codec 7's (runs, a random index's high bits, */
/* site differences): the loop's exit was mispredicted on the one or two bytes a random index's differences */
/* take at random (spmv: 3.6 -> 2.4 ns a record in rt_fused.c alone). Under 2^14, one 2-byte store; under   */
/* 2^21 one 4-byte store of 3 bytes: the streams' room (fused_room_*) leaves the bytes past the end.        */
static inline uint8_t *fz_varint_fast(uint8_t *p, uint64_t v)
{
    if (__builtin_expect(v < 0x4000, 1)) {
        uint64_t two = v >= 0x80;
        uint16_t x = (uint16_t)((v & 0x7f) | two << 7 | (v << 1 & 0x7f00));
        __builtin_memcpy(p, &x, 2);
        return p + 1 + two;
    }
    if (__builtin_expect(v >> 21, 0)) return fz_varint(p, v);
    uint32_t x = (uint32_t)((v & 0x7f) | (v << 1 & 0x7f00) | (v << 2 & 0x7f0000)) | 0x8080;
    __builtin_memcpy(p, &x, 4);
    return p + 3;
}

static inline uint64_t fz_zigzag(uint64_t d) { return (d << 1) ^ (uint64_t)((int64_t)d >> 63); }

/* n bytes from src to dst, 8 at a time (no libc here: the program's memcpy may be a traced one): reads and */
/* writes up to 7 bytes past both ends, which the streams' room and the payload's (fused_room_*) leave.     */
static inline uint8_t *fz_copy_words(uint8_t *dst, const uint8_t *src, size_t n)
{
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w;
        __builtin_memcpy(&w, src + i, 8);
        __builtin_memcpy(dst + i, &w, 8);
    }
    return dst + n;
}

/* The words of a tag slot and the event slots after it (its payload length, in[1] bits 8-23, in 16-byte */
/* slots), cut at end: what codecs 7 and 8 both copy as they are.                                          */
static inline size_t fz_tag_words(const uint64_t *in, const uint64_t *end)
{
    size_t n = 2 + ((((in[1] >> 8) & 0xffff) + 15) / 16) * 2;
    return in + n > end ? (size_t)(end - in) : n;
}

/* The payload of codecs 7 and 8 (docs/trace-format.md): the varints |c| and |t|, then the run stream c, the */
/* token stream t and the value stream v, into dst; returns its length. The readers' twin: PackedSlots.Streams. */
static inline size_t fz_payload(uint8_t *dst, const uint8_t *c0, const uint8_t *c, const uint8_t *t0,
                                const uint8_t *t, const uint8_t *v0, const uint8_t *v)
{
    size_t nc = (size_t)(c - c0), nt = (size_t)(t - t0), nv = (size_t)(v - v0);
    uint8_t *p = fz_varint(dst, nc);
    p = fz_varint(p, nt);
    p = fz_copy_words(p, c0, nc);
    p = fz_copy_words(p, t0, nt);
    p = fz_copy_words(p, v0, nv);
    return (size_t)(p - dst);
}

/* The encoder's table and where one chunk stands between its runs of slots (a buffer's tail, the next head). */
struct fused {
    uint64_t *table;            /* 5 << FUSED_BITS words, zero where a chunk starts */
    uint32_t *touched;          /* the entries this chunk may have set, 1 << FUSED_BITS */
    size_t ntouched;
    int many_sites;             /* the last chunk set entries past FUSED_MANY: this one fetches entries ahead */
    uint8_t *c, *t, *v;         /* the three streams being written (room: see fused_room) */
    uint8_t *c0, *t0, *v0;      /* where they start */
    uint64_t site, last, run;   /* the stride is the entry's, e[3] */
    size_t h;
    uint64_t records, dropped;  /* of the chunk */
    size_t slots;               /* tag and event slots of the chunk */
    int shift;                  /* the run stream's kinds: codec 7 none, 9 one bit (short tokens), 10 two (rt_fused.c) */
    int index;                  /* codec 11: index edges (rt_fused.c, pack11) */
};

/* Bytes each stream may need for n slots: the run stream (c) and the token stream (t) one per slot and a */
/* final run, the rest (v) 20 per slot (a token's high bits, a site's difference).                        */
static inline size_t fused_room_ct(size_t slots) { return slots + 16; }
static inline size_t fused_room_v(size_t slots) { return 20 * slots + 16; }

/* Bytes a buffer must leave before the value stream for fused_end_at_v: the header's two varints, c and t. */
static inline size_t fused_room_head(size_t slots) { return 2 * fused_room_ct(slots) + 32; }

/* Starts a chunk of codec 7, 9, 10 or 11: clears what the last one set; the streams go to c, t and v. */
void fused_begin(struct fused *x, uint8_t *c, uint8_t *t, uint8_t *v, int codec);
/* Slots [in, end) of the chunk (events_only: access records are dropped, counted). */
void fused_pack(struct fused *x, const uint64_t *in, const uint64_t *end, int events_only);
/* Ends the chunk: the payload before zstd (header, c, t, v) into dst; returns its length. */
size_t fused_end(struct fused *x, uint8_t *dst);
/* fused_end without copying v, the largest stream on the loops that miss (spmv: 37 of 60 MB): the header, c */
/* and t are copied to just before v, which fused_begin placed fused_room_head(slots) bytes or more into its  */
/* buffer. Returns where the payload (the same bytes as fused_end's) starts; *len gets its length.           */
uint8_t *fused_end_at_v(struct fused *x, size_t *len);

#endif
