/*
 * rt_codec.c: the codecs of the .mtr writer: a planned buffer's chunks (rt_plan.c) into payloads, each one
 * zstd frame (docs/compiled-in.md, "Codecs"; docs/trace-format.md, "Codec 7"; rt_writer.h lists the
 * writer's parts).
 *
 * A payload is codec 10 by default (9 with a second follower per entry): rt_fused.c's one pass per chunk, which folds the records a site's stride
 * predicts into run counts and writes the others as codec 6's tokens in two streams, zstd at level -3
 * (ZLEVEL_FUSED), a random index's miss as a short token (two bytes; docs/trace-format.md, "Codec 9").
 * Codec 7 (on request) is the same pass without short tokens. Codec 8 (on request) is rt_period.c's pass, each record predicted from the slot a period
 * back, with codec 7's streams and zstd level. Codec 6 is codec 5, below, with each site's granule, the trailing zero bits its differences
 * share, taken out of them (pack_scaled). Codec 5 is codec 4 with tables of 65,536 entries instead of 4,096:
 * every access slot becomes one varint, its address's difference to the previous address of a site hashed to
 * the same table entry, when its site is the one that followed the previous record's site last time (the
 * table remembers it), else that varint flagged and the site's difference as a second one (tag slots and
 * their event records pass as they are); the chunk is one zstd frame at level -3 (ZLEVEL_PACKED). A regular
 * loop packs into a byte or two per access that repeat and zstd stores in almost nothing; an irregular one
 * still gives zstd about a ninth of the bytes the slots take. MEMTRACE_CODEC=3 writes codec 4 without the
 * site prediction, 2 the older site-delta slots at level 3 (ZLEVEL), 1 plain zstd of the slots, 0 the slots
 * as they are (all there to measure the transforms). Each chunk becomes a piece of its encoder (payload,
 * stored and raw sizes, records and dropped records), which rt_file.c appends.
 *
 * What it gets wrong: two builds whose sites lie at other addresses still collide in codec 5's tables a
 * little and store other site distances, so their traces of the same records differ by a few bytes either
 * way (docs/compiled-in.md, "Never larger"); zstd failing (it cannot with a context sized for its level)
 * stops the trace.
 */
#include "rt_writer.h"

struct encoder wr_enc[2];

/* Slots [s, e) into dst (which may be s: the output never overtakes the input): tags pass, access slots */
/* are dropped (events_only) or delta-coded. In place, the slots are rewritten in lines the loop has just */
/* read; into scratch, another megabyte streams through the cache. Locals throughout: `out` may alias     */
/* anything of type uint64_t, so fields of `f` would be reloaded at every store.                          */
static size_t transform(struct encoder *x, const char *s, const char *e, char *dst, int events_only, int delta)
{
    uint64_t *out = (uint64_t *)dst, *table = x->table;
    const uint64_t *in = (const uint64_t *)s, *end = (const uint64_t *)e;
    uint64_t records = 0, dropped = 0, prev_site = 0, h = 0, last = 0;
    if (delta)
        for (size_t i = 0; i < (1u << TABLE_BITS); i++) table[i] = 0; /* every chunk decodes on its own */
    while (in < end) {
        uint64_t w0 = in[0], w1 = in[1];
        if (w1 >> 63) {
            size_t n = tag_words(in, end);
            if (out != in) for (size_t i = 0; i < n; i++) out[i] = in[i];
            out += n;
            in += n;
            continue;
        }
        in += 2;
        if (events_only) { dropped++; continue; }
        records++;
        if (delta) {
            /* Loops repeat their sites: the entry of the current site stays in a register until the site */
            /* changes (a store and reload per slot would chain every slot to the one before).           */
            if (w1 != prev_site) {
                table[h] = last;
                prev_site = w1;
                h = (w1 * 0x9E3779B97F4A7C15ULL) >> (64 - TABLE_BITS);
                last = table[h];
            }
            uint64_t d = w0 - last;
            last = w0;
            w0 = d;
        }
        out[0] = w0;
        out[1] = w1;
        out += 2;
    }
    x->records = records;
    x->dropped = dropped;
    return (size_t)((char *)out - dst);
}

/* Codec 3: slots into a byte stream before zstd (docs/compiled-in.md, "Codecs"). An access record is two */
/* varints, the site's difference to the previous record's site (zigzag, shifted left once so that the    */
/* low bit 0 says "access") and the address's difference to the previous address of a site hashed to the  */
/* same table entry (zigzag); a tag is the byte 1 followed by its slots as they are. A regular loop packs   */
/* into a few bytes per access that repeat, an irregular one into a few bytes that do not: either way zstd  */
/* sees about a fifth of codec 2's input.                                                                  */
static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint64_t zigzag(uint64_t d) { return (d << 1) ^ (uint64_t)((int64_t)d >> 63); }

/* Codec 4 (the default): codec 3 with the site predicted. Each table entry also remembers the site that */
/* followed the last record of a site hashed to it; a record whose site is that one (nine in ten on gzip,  */
/* all but a few in a loop) is one varint, the address difference (zigzag) shifted left once, 65 bits; any */
/* other record sets that low bit and adds the site's difference to the previous site (zigzag, plus 1). A  */
/* tag is the bytes 1, 0 and its slots as they are. zstd then reads about half the bytes codec 3 gives it (gzip: 1.7        */
/* instead of 3.4 per access) and spends about a third less time on them.                                   */
/* The 65-bit number v * 2 + bit as LEB128: the low byte holds the bit and v's low 6 bits. */
static inline uint8_t *put_token(uint8_t *p, uint64_t v, uint64_t bit)
{
    uint64_t first = (v & 0x3f) << 1 | bit;
    if (v < 0x40) {
        *p++ = (uint8_t)first;
        return p;
    }
    *p++ = (uint8_t)(first | 0x80);
    return put_varint(p, v >> 6);
}

/* A tag and its n slot words as the packing codecs write them: the byte 1 (then 0 in codecs 4 and later, */
/* where a record's low bit 1 says "site given"), then the words as they are. Returns the output's end.  */
static inline uint8_t *put_tag(uint8_t *out, const uint64_t *in, size_t n, int predict)
{
    *out++ = 1;
    if (predict) *out++ = 0;
    rt_memcpy(out, in, n * 8);
    return out + n * 8;
}

/* The end of a packing run: its counts for the chunk's header, *raw the slot bytes it stands for, and the */
/* packed bytes written (returned).                                                                         */
static inline size_t pack_end(struct encoder *x, uint64_t records, uint64_t dropped, size_t slots, size_t *raw, size_t bytes)
{
    x->records = records;
    x->dropped = dropped;
    *raw = (slots + records) * 16;
    return bytes;
}

/* Where packing stands between two runs of slots of one chunk (a buffer's tail, the next buffer's head). */
struct pack_state {
    uint64_t site, last;
    size_t h;
};

/* Codecs 3 and 4 share one loop, specialized by the constant `predict` in each caller: the hot path */
/* carries no test of the codec. Returns the packed bytes written to dst (room for 5/4 of the input); */
/* *raw gets the slot bytes they stand for. A chunk starts from a zeroed table and state.            */
static inline __attribute__((always_inline)) size_t
pack_slots(struct encoder *x, struct pack_state *ps, const char *s, const char *e, uint8_t *dst, int events_only, size_t *raw,
           int predict, int bits)
{
    /* per entry: [0] the last address of its sites; with predict, [1] the site after its last one */
    uint64_t *t = x->table;
    const size_t stride = predict ? 2 : 1;
    const uint64_t *in = (const uint64_t *)s, *end = (const uint64_t *)e;
    uint8_t *out = dst;
    uint64_t records = 0, dropped = 0, site = ps->site, last = ps->last;
    size_t h = ps->h, slots = 0;
    while (in < end) {
        uint64_t w0 = in[0], w1 = in[1];
        if (__builtin_expect(w1 >> 63, 0)) {
            size_t n = tag_words(in, end);
            out = put_tag(out, in, n, predict);
            in += n;
            slots += n / 2;
            continue;
        }
        in += 2;
        if (events_only) { dropped++; continue; }
        records++;
        uint64_t step = w1 - site, predicted = 0;
        if (predict) {
            predicted = t[2 * h + 1];
            /* an entry's successor is a site, never 0, once set: each entry is listed once per chunk (the */
            /* bound keeps a record of site 0, were there one, inside the list; a full list clears all)    */
            if (__builtin_expect(!predicted, 0) && x->ntouched < ((size_t)1 << bits)) x->touched[x->ntouched++] = (uint32_t)h;
            t[2 * h + 1] = w1;
        } else {
            out = put_varint(out, zigzag(step) << 1);
        }
        if (w1 != site) {
            t[stride * h] = last;
            site = w1;
            h = (w1 * 0x9E3779B97F4A7C15ULL) >> (64 - bits);
            last = t[stride * h];
        }
        uint64_t a = zigzag(w0 - last);
        last = w0;
        if (!predict) {
            out = put_varint(out, a);
        } else if (__builtin_expect(w1 == predicted, 1)) {
            out = put_token(out, a, 0);
        } else {
            out = put_token(out, a, 1);
            out = put_varint(out, zigzag(step) + 1);
        }
    }
    ps->site = site;
    ps->last = last;
    ps->h = h;
    return pack_end(x, records, dropped, slots, raw, (size_t)(out - dst));
}

/* Codec 6: codec 5 with each site's granule. An entry (4 words: the last address of its sites, the site   */
/* after its last one, its granule g plus 1, 0 while unset, which reads as G0) stores an address difference */
/* d as d >> g when d's low g bits are clear: an array of doubles indexed at random (base + 8 x index)      */
/* costs the index's difference, not eight times it, so a 14-bit index takes two bytes instead of three.   */
/* A d with a low bit set in its granule re-grains the entry: the token carries d itself, flagged, then the */
/* varint 1 and the site's difference (zigzag, plus 1), and g becomes d's trailing zero count. Other        */
/* flagged records carry the site's difference (zigzag) plus 2; a tag is the bytes 1, 0 as in codec 4.     */
/* A site re-grains at most G0 times an entry per chunk (once more when its first difference, the address   */
/* itself, has fewer trailing zeros than its later ones).                                                    */
#define G0 6
struct scaled_state {
    uint64_t site, last;
    size_t h;
    uint64_t g;
};

static size_t pack_scaled(struct encoder *x, struct scaled_state *ps, const char *s, const char *e, uint8_t *dst, int events_only,
                          size_t *raw)
{
    uint64_t *t = x->table;
    const uint64_t *in = (const uint64_t *)s, *end = (const uint64_t *)e;
    uint8_t *out = dst;
    uint64_t records = 0, dropped = 0, site = ps->site, last = ps->last, g = ps->g;
    size_t h = ps->h, slots = 0;
    while (in < end) {
        uint64_t w0 = in[0], w1 = in[1];
        if (__builtin_expect(w1 >> 63, 0)) {
            size_t n = tag_words(in, end);
            out = put_tag(out, in, n, 1);
            in += n;
            slots += n / 2;
            continue;
        }
        in += 2;
        if (events_only) { dropped++; continue; }
        records++;
        uint64_t step = w1 - site, predicted = t[4 * h + 1];
        if (__builtin_expect(!predicted, 0) && x->ntouched < ((size_t)1 << WIDE_BITS)) x->touched[x->ntouched++] = (uint32_t)h;
        t[4 * h + 1] = w1;
        if (w1 != site) {
            t[4 * h] = last;
            t[4 * h + 2] = g + 1;
            site = w1;
            h = (w1 * 0x9E3779B97F4A7C15ULL) >> (64 - WIDE_BITS);
            last = t[4 * h];
            g = t[4 * h + 2] ? t[4 * h + 2] - 1 : G0;
        }
        uint64_t d = w0 - last;
        last = w0;
        if (__builtin_expect((d & ((1ULL << g) - 1)) == 0, 1)) {
            uint64_t a = zigzag((uint64_t)((int64_t)d >> g));
            if (__builtin_expect(w1 == predicted, 1)) {
                out = put_token(out, a, 0);
            } else {
                out = put_token(out, a, 1);
                out = put_varint(out, zigzag(step) + 2);
            }
        } else { /* d != 0 here */
            g = (uint64_t)__builtin_ctzll(d);
            out = put_token(out, zigzag(d), 1);
            *out++ = 1;
            out = put_varint(out, zigzag(step) + 1);
        }
    }
    ps->site = site;
    ps->last = last;
    ps->h = h;
    ps->g = g;
    return pack_end(x, records, dropped, slots, raw, (size_t)(out - dst));
}

/* pack_slots for the file's codec (3, 4 or 5), each call specialized by its constants */
static size_t pack(struct encoder *x, struct pack_state *ps, const char *s, const char *e, uint8_t *dst, int events_only, size_t *raw)
{
    if (wr.codec == 5) return pack_slots(x, ps, s, e, dst, events_only, raw, 1, WIDE_BITS);
    return wr.codec == 4 ? pack_slots(x, ps, s, e, dst, events_only, raw, 1, TABLE_BITS)
                        : pack_slots(x, ps, s, e, dst, events_only, raw, 0, TABLE_BITS);
}

/* The bits of a packing codec's table index: codec 5's 65,536 entries, codecs 3 and 4's 4,096. */
static inline int table_bits(int codec) { return codec >= 5 ? WIDE_BITS : TABLE_BITS; }

/* Words per table entry: codec 3's 1, 4's and 5's 2, 6's 4, 7's, 9's and 10's 5 (rt_fused.h's table and its */
/* other followers), 8's 1 (its far tokens' last address).                                                    */
static inline size_t entry_words(int codec) { return codec == 3 || codec == 8 ? 1 : codec >= 7 ? 5 : codec == 6 ? 4 : 2; }

/* Every chunk decodes on its own: the table is zero where a chunk starts. Codec 3's (4,096 entries) is */
/* cleared whole; codecs 4 and 5 clear the entries the last chunk listed as set.                        */
static void clear_table(struct encoder *x, int codec)
{
    if (codec == 3) {
        for (size_t i = 0; i < ((size_t)1 << TABLE_BITS); i++) x->table[i] = 0;
        return;
    }
    size_t words = entry_words(codec);
    if (x->ntouched == ((size_t)1 << table_bits(codec))) {
        for (size_t i = 0; i < (words << table_bits(codec)); i++) x->table[i] = 0;
        x->ntouched = 0;
        return;
    }
    for (size_t i = 0; i < x->ntouched; i++)
        for (size_t k = 0; k < words; k++) x->table[words * x->touched[i] + k] = 0;
    x->ntouched = 0;
}

/* zstd's hash table for a chunk of codec 7, 9 or 10 (rt_writer.h, FUSED_HASHLOG_DENSE): small where the token */
/* stream holds a byte for half the records or more, else zstd's default for the level (0). A function of the   */
/* chunk's own payload, never of the chunks before: a skeleton build's chunk equal to the full build's is the  */
/* same frame.                                                                                                  */
static int fused_hashlog(const struct fused *fz)
{
    return fz->records && (uint64_t)(fz->t - fz->t0) * 2 >= fz->records ? FUSED_HASHLOG_DENSE : 0;
}

/* One chunk from a thread's slots [s1, e1) followed by [s2, e2) (a buffer's tail and the next buffer's head; */
/* codecs 3 and 4 only) into the encoder's next piece, transformed in place when the buffer is ours (queued), */
/* else into scratch (another thread's live buffer at the end). A piece with no slots to write is counted    */
/* (dropped records) but not written.                                                                         */
void wr_encode_piece(struct encoder *x, const char *s1, const char *e1, const char *s2, const char *e2, int events_only,
                         int in_place)
{
    struct piece *pc = &x->piece[x->npieces++];
    pc->records = pc->dropped = pc->raw = pc->stored = 0;
    if (wr.broken) return;
    int codec = wr.codec;
    char *raw_data = in_place && codec < 3 ? (char *)s1 : x->scratch;
    size_t raw, input;
    if (codec == 8) {
        size_t room = rt.buf_size / 16 + 4096; /* slots of a chunk, and a margin for its last tag */
        uint8_t *c = x->streams, *t = c + period_room_ct(room);
        PROF_START;
        period_begin(&x->pz, c, t, t + period_room_ct(room));
        period_pack(&x->pz, (const uint64_t *)s1, (const uint64_t *)e1, events_only);
        if (e2 > s2) period_pack(&x->pz, (const uint64_t *)s2, (const uint64_t *)e2, events_only);
        input = period_end(&x->pz, (uint8_t *)raw_data);
        PROF_END(1);
#ifdef RT_PROFILE
        __atomic_add_fetch(&prof_ns[4], input * 1000000, __ATOMIC_RELAXED);
#endif
        pc->records = x->pz.records;
        pc->dropped = x->pz.dropped;
        raw = (x->pz.slots + x->pz.records) * 16;
    } else if (codec == 7 || codec >= 9) {
        size_t room = rt.buf_size / 16 + 4096; /* slots of a chunk, and a margin for its last tag */
        uint8_t *c = x->streams, *t = c + fused_room_ct(room);
        PROF_START;
        /* v straight into scratch, where the payload ends: only c and t are copied before it (fused_end_at_v) */
        fused_begin(&x->fz, c, t, (uint8_t *)x->scratch + fused_room_head(room), codec);
        fused_pack(&x->fz, (const uint64_t *)s1, (const uint64_t *)e1, events_only);
        if (e2 > s2) fused_pack(&x->fz, (const uint64_t *)s2, (const uint64_t *)e2, events_only);
        raw_data = (char *)fused_end_at_v(&x->fz, &input);
        PROF_END(1);
#ifdef RT_PROFILE
        __atomic_add_fetch(&prof_ns[4], input * 1000000, __ATOMIC_RELAXED);
#endif
        pc->records = x->fz.records;
        pc->dropped = x->fz.dropped;
        raw = (x->fz.slots + x->fz.records) * 16;
        ZSTD_CCtx_setParameter(x->cctx, ZSTD_c_hashLog, fused_hashlog(&x->fz));
    } else if (codec >= 3) {
        struct pack_state ps = {0, 0, 0};
        struct scaled_state ss = {0, 0, 0, G0};
        clear_table(x, codec);
        size_t raw2 = 0;
        PROF_START;
        input = codec == 6 ? pack_scaled(x, &ss, s1, e1, (uint8_t *)raw_data, events_only, &raw)
                           : pack(x, &ps, s1, e1, (uint8_t *)raw_data, events_only, &raw);
        pc->records = x->records;
        pc->dropped = x->dropped;
        if (e2 > s2) {
            input += codec == 6 ? pack_scaled(x, &ss, s2, e2, (uint8_t *)raw_data + input, events_only, &raw2)
                                : pack(x, &ps, s2, e2, (uint8_t *)raw_data + input, events_only, &raw2);
            pc->records += x->records;
            pc->dropped += x->dropped;
        }
        raw += raw2;
        PROF_END(1);
#ifdef RT_PROFILE
        __atomic_add_fetch(&prof_ns[4], input * 1000000, __ATOMIC_RELAXED);
#endif
    } else {
        input = raw = transform(x, s1, e1, raw_data, events_only, codec == 2);
        pc->records = x->records;
        pc->dropped = x->dropped;
    }
    pc->raw = raw;
    if (!raw) return;
    pc->payload = raw_data;
    pc->stored = raw;
    if (codec) {
        char *dst = x->packed + x->packed_used;
        PROF_START;
        size_t z = codec >= 7 ? ZSTD_compress2(x->cctx, dst, x->packed_cap - x->packed_used, raw_data, input)
                              : ZSTD_compressCCtx(x->cctx, dst, x->packed_cap - x->packed_used, raw_data, input,
                                                  codec >= 3 ? ZLEVEL_PACKED : ZLEVEL);
        PROF_END(2);
        if (ZSTD_isError(z)) { /* cannot happen with a static context sized for ZLEVEL: stop writing */
            static const char msg[] = "memtrace: zstd failed; the trace stops here\n";
            mt_sys3(SYS_write, 2, msg, sizeof msg - 1);
            wr.broken = 1;
            pc->raw = 0;
            return;
        }
        pc->payload = dst;
        pc->stored = z;
        x->packed_used += z;
    }
}

/* Encodes b's chunks as planned (into x's pieces); the previous buffer, once its tail is read, is let go. */
static void encode_buffer_now(struct encoder *x, struct rt_buf *b, int in_place);

/* Rewritten libc that zstd calls (memcpy) records into the sink, in whichever thread encodes: a program */
/* thread encodes from inside its full-buffer fault, its cursor at the guard (agent/rewrite/rw_apply.c). */
void wr_encode_buffer(struct encoder *x, struct rt_buf *b, int in_place)
{
    char *saved = rw_sink_enter();
    encode_buffer_now(x, b, in_place);
    rw_sink_leave(saved);
}

static void encode_buffer_now(struct encoder *x, struct rt_buf *b, int in_place)
{
    x->npieces = 0;
    x->packed_used = 0;
    struct rt_buf *p = b->prev;
    if (p && b->prev_alone) wr_encode_piece(x, p->tail, p->used, 0, 0, p->events_only, 1);
    int joined = p && !b->prev_alone;   /* the chunk being cut began in p's tail */
    const char *s = joined ? p->tail : b->from;
    for (int i = 0; i <= b->ncuts; i++) {
        const char *e = i < b->ncuts ? b->cuts[i] : b->tail;
        if (joined && e >= p->base && e <= p->end) { /* a cut inside p's tail */
            wr_encode_piece(x, s, e, 0, 0, p->events_only, 1);
            s = e;
            continue;
        }
        if (joined) wr_encode_piece(x, s, p->used, b->from, e, b->events_only, in_place);
        else if (e > s) wr_encode_piece(x, s, e, 0, 0, b->events_only, in_place);
        joined = 0;
        s = e;
    }
    if (p) wr_release(p);
    b->prev = NULL;
}

/* Codec 7's zstd parameters, kept by the context from frame to frame (ZSTD_compress2). A static context */
/* starts with every parameter zero, the content size flag too, which the reader needs: reset them first. */
static int fused_params(ZSTD_CCtx *cctx)
{
    return cctx && !ZSTD_isError(ZSTD_CCtx_reset(cctx, ZSTD_reset_parameters)) &&
           !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1)) &&
           !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, ZLEVEL_FUSED)) &&
           !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_minMatch, FUSED_MINMATCH)) &&
           !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_literalCompressionMode, FUSED_HUFFMAN ? ZSTD_ps_enable : ZSTD_ps_auto));
}

/* Both encoders' memory, mapped once at start: scratch, frames, tables and a static zstd context each. */
int wr_codec_init(int codec)
{
    for (int i = 0; i < 2; i++) {
        struct encoder *x = &wr_enc[i];
        /* codecs 7, 9, 10 compress at ZLEVEL_FUSED: a context sized for -3 failed python3's first chunk at level 1 */
        x->work_size = ZSTD_estimateCCtxSize(codec == 7 || codec >= 9 ? ZLEVEL_FUSED : codec >= 3 ? ZLEVEL_PACKED : ZLEVEL);
        x->work = rt_map_own(x->work_size);
        /* the worst case: 20 bytes per 16-byte slot (codecs 3-5), 21 (6), 22 and a tag's margin (7, 9), 26 (8) */
        size_t room = rt.buf_size / 16 + 4096; /* slots of a chunk (codecs 7-9), and a margin for its last tag */
        size_t scratch = codec == 8 ? 2 * rt.buf_size + rt.buf_size / 2 + 65536
                       : codec == 7 || codec >= 9 ? fused_room_head(room) + fused_room_v(room)
                                                  : rt.buf_size + rt.buf_size / 2 + 16;
        x->scratch = rt_map_own(scratch);
        /* a buffer and a tail: 2 buffers' slots (codecs 7 and 9 sized as their scratch was when it held all three streams) */
        size_t frames = codec == 7 || codec >= 9 ? 2 * rt.buf_size + 65536 : scratch;
        x->packed_cap = 2 * ZSTD_compressBound(frames) + 64 * (RT_MAX_CUTS + 2);
        x->packed = rt_map_own(x->packed_cap);
        x->table = rt_map_own(entry_words(codec < 3 ? 3 : codec) * sizeof(uint64_t) << table_bits(codec));
        x->touched = rt_map_own(sizeof(uint32_t) << table_bits(codec));
        x->cctx = x->work ? ZSTD_initStaticCCtx(x->work, x->work_size) : NULL;
        if (codec == 8) {
            x->streams = rt_map_own(2 * period_room_ct(room) + period_room_v(room));
            x->pz.dd = rt_map_own(room * sizeof(uint64_t));
            x->pz.table = x->table;
            x->pz.touched = x->touched;
            if (!x->streams || !x->pz.dd || !fused_params(x->cctx)) return 0;
        }
        if (codec == 7 || codec >= 9) { /* c and t; v is written into scratch */
            x->streams = rt_map_own(2 * fused_room_ct(room));
            x->fz.table = x->table;
            x->fz.touched = x->touched;
            if (!x->streams || !fused_params(x->cctx)) return 0;
        }
        if (!x->cctx || !x->scratch || !x->packed || !x->table || !x->touched) return 0;
    }
    return 1;
}

void wr_codec_fork_child(void)
{
    for (int i = 0; i < 2; i++) {
        wr_enc[i].lock.owner = 0;
        wr_enc[i].cctx = ZSTD_initStaticCCtx(wr_enc[i].work, wr_enc[i].work_size);
        if (wr.codec >= 7) fused_params(wr_enc[i].cctx);
    }
}
