/*
 * rt_fused.c: codec 7, the fused encoder (docs/trace-format.md, "Codec 7"). One pass over a thread's slots
 * predicts each access record from a table entry of its site (fused_entry): its site is the one that followed
 * the entry's site last time, and its address differs from the entry's last one by the entry's stride (the
 * last difference). A record that meets both predictions (a hit) costs nothing but a count: a run of hits is
 * one varint in the run stream (c) before the next token. Any other record is a token as codec 6 writes it,
 * split in two: its first byte (flag, six bits of the granule-scaled difference, continuation) into the token
 * stream (t), the rest and the site's difference into the value stream (v); a tag likewise, its slots into v.
 * The payload is a header (the lengths of c and t as varints) and the three streams, which one zstd frame at a
 * fast level then compresses: the streams keep apart bytes of different statistics (a random index's low bits
 * are near-uniform; its high bits and the runs are not), so the runs of c become zstd matches.
 *
 * Codec 10 (pack10) also keeps each entry's other follower: a record at it, at its stride, is a run's kind 2 in c
 * alone (spmv's row ends: two tokens with their sites a row in codec 9; 0.681 -> 0.601 bytes an access).
 * Codec 11 (pack11, on request) also has index edges: a random index's record is two bytes of v within a run.
 *
 * A loop of k sites at constant strides is all hits: past 16 of them a period skip (below) finds how far the
 * hits go from the slots alone, four records a test, and leaves the table as the record-by-record pass would.
 *
 * What it gets wrong: the model is zero-order per entry (one stride, one or two successors); two sites hashed
 * to one entry share it and predict each other badly; a loop whose stride alternates (a 2-D walk's row ends)
 * pays a token at each change (codec 10 keeps a second follower, not a second stride). zstd at its fast levels
 * stores literals as they are: the random bits of t and v are written whole (rt_writer.h, FUSED_HUFFMAN).
 */
#include "rt_fused.h"

void fused_begin(struct fused *x, uint8_t *c, uint8_t *t, uint8_t *v, int codec)
{
    x->shift = fused_shift(codec);
    x->index = codec == 11;
    x->many_sites = x->ntouched >= FUSED_MANY;
    uint64_t *tab = x->table, *alt = tab + ((size_t)4 << FUSED_BITS);
    if (x->ntouched >= ((size_t)1 << FUSED_BITS)) {
        for (size_t i = 0; i < ((size_t)5 << FUSED_BITS); i++) tab[i] = 0;
    } else {
        for (size_t i = 0; i < x->ntouched; i++) {
            uint64_t *e = &tab[4 * (size_t)x->touched[i]];
            e[0] = e[1] = e[2] = e[3] = 0;
            alt[x->touched[i]] = 0;
        }
    }
    x->ntouched = 0;
    x->c = x->c0 = c;
    x->t = x->t0 = t;
    x->v = x->v0 = v;
    x->site = x->last = x->run = 0;
    x->h = 0;
    x->records = x->dropped = 0;
    x->slots = 0;
}

/* A tag and its event slots, as they are: a run, the token 1 and, in v, 0 and the slot words. Returns the words read. */
static inline size_t put_tag(struct fused *x, const uint64_t *in, const uint64_t *end, uint64_t run)
{
    size_t n = fz_tag_words(in, end);
    x->c = fz_varint(x->c, run << x->shift); /* codecs 9 and 10: kind 0, a token of t */
    *x->t++ = 1;
    uint8_t *v = x->v;
    *v++ = 0;
    x->v = fz_copy_words(v, (const uint8_t *)in, 8 * n);
    x->slots += n / 2;
    return n;
}

/* An entry the chunk writes while its successor is unset is listed, so that the next chunk clears it. */
static inline void touch(struct fused *x, size_t h)
{
    if (x->ntouched < ((size_t)1 << FUSED_BITS)) x->touched[x->ntouched++] = (uint32_t)h;
}

/* ---- the period skip: a stretch of hits found without the table ------------------------------------- */
/*
 * In a loop of k sites whose entries differ, the table model's prediction for record j is record j-k's site's
 * follower and stride, which are record j-k's site and difference: so once the sites repeat with period k,
 * record j is a hit exactly when its slot minus slot j-k equals slot j-k minus slot j-2k (both words: address
 * and site). Proof, for j past A, the first record not yet encoded, given the k records before A each have the
 * site k records back and the k sites' entries are pairwise distinct: site j's entry was last used by record j-k
 * (no other site of the window shares it), so its last address is record j-k's; its stride was set by record
 * j-k (a miss writes d, a hit has d equal to it already) to record j-k's difference from record j-2k; and the
 * follower of site j-1's entry was set or confirmed by record j-k, the one after j-1-k, to site j-k = site j.
 * Hits change nothing but the entries' last addresses, so a stretch of them is encoded as a run and the k
 * entries' last addresses written once. The test is a few vector operations a record where the table's is a
 * dozen instructions with a store, a multiply and two loads: gemm and smooth's loops are all hits.
 */
#define PERIOD_MAX 8 /* the longest period looked for (a probe group has up to 8 slots) */

typedef uint64_t fz_v2 __attribute__((vector_size(16)));

static inline fz_v2 slot_at(const uint64_t *w)
{
    fz_v2 x;
    __builtin_memcpy(&x, w, 16);
    return x;
}

/* The first of the records from `in` that a test of R records at a time finds not all hits, or where fewer than R */
/* remain, with k (a constant in each copy) the period and R = k, or 4 or 6 for periods of 1, 2 and 3. A record  */
/* j is a hit when its slot minus slot j-k equals slot j-k minus slot j-2k; while all are, that difference is    */
/* the same for each lane (record mod k), so each of the R records of a test is compared with a prediction (its  */
/* slot R records back plus R/k lane differences) kept in a register: one load of the slots a record and three  */
/* vector operations, where the test of both differences took three loads and four (gemm, period 3: 25 % of the */
/* traced process's CPU was this loop). Periods 7 and 8 keep the older test (their copies would spill).        */
static inline __attribute__((always_inline)) const uint64_t *period_run(const uint64_t *p, const uint64_t *end, const size_t k)
{
    const size_t R = k == 1 ? 4 : k == 2 || k == 3 ? 2 * k : k;
    fz_v2 pred[6], step[6];
#pragma GCC unroll 6
    for (size_t i = 0; i < R; i++) { /* record i's prediction: lane i mod k's last slot plus its difference, times i/k + 1 */
        const uint64_t *last = p + 2 * (ptrdiff_t)(i % k) - 2 * (ptrdiff_t)k;
        fz_v2 d = slot_at(last) - slot_at(last - 2 * k);
        step[i] = d * (uint64_t)(R / k);
        pred[i] = slot_at(last) + d * (uint64_t)(i / k + 1);
    }
    while ((size_t)(end - p) >= 2 * R) {
        fz_v2 any = {0, 0};
#pragma GCC unroll 6
        for (size_t i = 0; i < R; i++) any |= slot_at(p + 2 * i) ^ pred[i];
        if (any[0] | any[1]) break;
#pragma GCC unroll 6
        for (size_t i = 0; i < R; i++) pred[i] += step[i];
        p += 2 * R;
    }
    return p;
}

/* The records from `in` (before `end`) that are hits by the argument above, 0 when the records before `in` */
/* (from `start`, this call's, so of this chunk) show no period; *period gets k.                            */
static size_t period_hits(const uint64_t *tab, const uint64_t *in, const uint64_t *start, const uint64_t *end, size_t *period)
{
    size_t k = 1, before = (size_t)(in - start) / 2;
    uint64_t s = in[-1];
    while (k <= PERIOD_MAX && (2 * k > before || in[-1 - 2 * (ptrdiff_t)k] != s)) k++;
    if (k > PERIOD_MAX || 2 * k > before) return 0;
    size_t h[PERIOD_MAX];
    for (size_t i = 0; i < k; i++) {
        const uint64_t *r = in - 2 * (k - i); /* the window's records, oldest first */
        if (r[1] != r[1 - 2 * (ptrdiff_t)k] || r[1] >> 63) return 0;
        h[i] = fused_entry(r[1]);
        if (tab[4 * h[i] + 1] >> 63) return 0; /* codec 11's index edge: its records are never hits */
        for (size_t j = 0; j < i; j++)
            if (h[j] == h[i]) return 0;
    }
    const ptrdiff_t back = 2 * (ptrdiff_t)k;
    const uint64_t *p = in;
    switch (k) { /* whole periods a test while they remain (one copy a period), then one at a time up to the first miss */
    case 1: p = period_run(in, end, 1); break;
    case 2: p = period_run(in, end, 2); break;
    case 3: p = period_run(in, end, 3); break;
    case 4: p = period_run(in, end, 4); break;
    case 5: p = period_run(in, end, 5); break;
    case 6: p = period_run(in, end, 6); break;
    default: /* 7, 8: four records a test, both differences from the slots */
        while (end - p >= 8) {
            fz_v2 m = slot_at(p - back), m2 = slot_at(p - 2 * back);
            fz_v2 x0 = (slot_at(p) - m) - (m - m2);
            m = slot_at(p + 2 - back), m2 = slot_at(p + 2 - 2 * back);
            fz_v2 x1 = (slot_at(p + 2) - m) - (m - m2);
            m = slot_at(p + 4 - back), m2 = slot_at(p + 4 - 2 * back);
            fz_v2 x2 = (slot_at(p + 4) - m) - (m - m2);
            m = slot_at(p + 6 - back), m2 = slot_at(p + 6 - 2 * back);
            fz_v2 x3 = (slot_at(p + 6) - m) - (m - m2);
            fz_v2 any = (x0 | x1) | (x2 | x3);
            if (any[0] | any[1]) break;
            p += 8;
        }
    }
    while (p < end && p[0] - p[-back] == p[-back] - p[-2 * back] && p[1] == p[1 - back]) p += 2;
    *period = k;
    return (size_t)(p - in) / 2;
}

/* Every slot passes here once. A hit costs two loads of the slot and one of the entry's successor, a compare, */
/* the entry switched when the site changes (a store, a load, a multiply), a subtraction, a compare with the  */
/* entry's stride and a count; nothing is written. (The stride stays in the entry, not in a register: with one */
/* register fewer the value stream's pointer is no longer spilled, which had chained every miss through a     */
/* store and a reload: an all-miss stream 5.3 -> 4.4 ns a record in bench/runtime/fused_bench.c.) The slot's site is compared with the prediction before it is looked at as a tag: */
/* a prediction is a site, and no site has a tag's top bit. The granule is read on a miss only, from the table. */
/* `shorts` (codec 9, a constant in each copy): a record at the predicted site whose granule-scaled           */
/* difference a (zigzag) is under 65,536 is a short token: the run before it, times 2 plus 1, in c and a's two */
/* bytes in v, little-endian; every other token's run is its run times 2. Two stores where codec 7 writes its */
/* first byte and a varint (a dozen instructions and a branch on the varint's length more), and a byte fewer  */
/* for zstd to read. A small a (under 64), which codec 7's token byte holds, is a short token too when c's     */
/* last byte is the one it would write: in a random index's stream each such token had broken c's repeated    */
/* byte into one more zstd sequence, and zstd's time is c's sequences (spmv: 5.34 -> 4.93 ns an access beyond */
/* native, 0.705 -> 0.681 bytes); elsewhere (smooth's row ends) the token byte mostly stays, which zstd matches */
/* better than two bytes in v (smooth still 0.057 -> 0.065 bytes; bench/results/encoder.md).                  */
static inline __attribute__((always_inline)) void pack_records(struct fused *x, const uint64_t *in, const uint64_t *end, const int shorts,
                                                            const int alts, const int prefetch, const int idx)
{
    const int sh = alts ? 2 : 1; /* codec 9's run shift, 10's (shorts only) */
    uint64_t *tab = x->table, *e = &tab[4 * x->h], *alt = tab + ((size_t)4 << FUSED_BITS);
    uint8_t *c = x->c, *t = x->t, *v = x->v;
    uint64_t site = x->site, last = x->last, run = x->run;
    const uint64_t *start = in;
    size_t slots0 = x->slots; /* the tags' slots this call adds are not records */
/* to the entry of site w1: the old one keeps its last address, the new one's is read */
#define SWITCH(w1)                      \
    do {                                \
        e[0] = last;                    \
        site = (w1);                    \
        e = &tab[4 * fused_entry(w1)];  \
        last = e[0];                    \
    } while (0)
    while (in < end) {
        uint64_t w0 = in[0], w1 = in[1], bit, site_before = site, d;
        if (prefetch && __builtin_expect(end - in > 2 * FUSED_AHEAD + 2, 1)) { /* the entry FUSED_AHEAD records on (FUSED_MANY) */
            size_t ph = fused_entry(in[2 * FUSED_AHEAD + 1]);
            __builtin_prefetch(&tab[4 * ph], 1);
            if (alts) __builtin_prefetch(&alt[ph], 1);
        }
        if (__builtin_expect(w1 == e[1], 1)) {
            in += 2;
            if (w1 != site) SWITCH(w1);
            d = w0 - last;
            last = w0;
            if (__builtin_expect(d == e[3], 1)) {
                /* every 16th hit of a run, a look for a period (above): past it, hits without the table */
                if (__builtin_expect((++run & 15) == 0, 0)) {
                    size_t k, n = period_hits(tab, in, start, end, &k);
                    if (n) {
                        in += 2 * n;
                        run += n;
                        for (size_t i = 1; i <= k; i++) tab[4 * fused_entry(in[1 - 2 * (ptrdiff_t)i])] = in[-2 * (ptrdiff_t)i];
                        site = in[-1];
                        e = &tab[4 * fused_entry(site)];
                        last = in[-2];
                    }
                }
                continue;
            }
            bit = 0;
        } else if (idx && e[1] == ~w1) { /* codec 11: an index edge (above pack11); never a tag, whose ~ is no site */
            in += 2;
            uint64_t *pe = e;
            if (w1 != site) SWITCH(w1);
            d = w0 - last;
            last = w0;
            uint64_t g = e[2] ^ FUSED_G0, q = (uint64_t)((int64_t)d >> g);
            if (__builtin_expect(q << g == d && q + 0x8000 < 0x10000, 1)) { /* q itself, 16 bits: no zigzag */
                if (__builtin_expect(d == e[3], 0)) pe[1] = w1; /* the stride again: a plain edge */
                e[3] = d;
                uint16_t two = (uint16_t)q;
                __builtin_memcpy(v, &two, 2);
                v += 2;
                run++;
                continue;
            }
            pe[1] = w1; /* too far or off the granule: codec 10's token at the predicted site; the edge is plain */
            bit = 0;
            goto token;
        } else if (__builtin_expect(w1 >> 63, 0)) {
            x->c = c;
            x->t = t;
            x->v = v;
            size_t n = put_tag(x, in, end, run);
            c = x->c;
            t = x->t;
            v = x->v;
            run = 0;
            in += n;
            continue;
        } else {
            in += 2;
            uint64_t was = e[1], other = 0;
            if (__builtin_expect(!was, 0)) touch(x, (size_t)(e - tab) / 4);
            e[1] = w1;
            if (alts) { /* codec 10: the follower before this one becomes the other follower */
                size_t h = (size_t)(e - tab) / 4;
                other = alt[h];
                alt[h] = was;
            }
            if (w1 != site) SWITCH(w1);
            d = w0 - last;
            last = w0;
            if (alts && w1 == other && d == e[3]) { /* the other follower at its stride: a hit of kind 2 */
                uint64_t r = run << 2 | 2;
                run = 0;
                if (__builtin_expect(r < 0x80, 1)) *c++ = (uint8_t)r;
                else c = fz_varint_fast(c, r);
                continue;
            }
            bit = 1;
        }
    token:
        /* a run before a token is short in loops that miss (spmv: 2, hash: 0 or 1): one byte, one store */
        if (!shorts) {
            if (__builtin_expect(run < 0x80, 1)) *c++ = (uint8_t)run;
            else c = fz_varint_fast(c, run);
            run = 0;
        }
        if (__builtin_expect(!e[1], 0)) touch(x, (size_t)(e - tab) / 4);
        e[3] = d;
        /* The granule is kept as g ^ FUSED_G0 (0: unset, which reads as FUSED_G0): no test for unset. d's low */
        /* g bits are clear when shifting it down and back gives d. The site's difference is computed only    */
        /* when a flag asks for it: on spmv's misses (a random index, its site predicted) it is never needed. */
        uint64_t g = e[2] ^ FUSED_G0, q = (uint64_t)((int64_t)d >> g), a;
        int regrain = __builtin_expect(q << g != d, 0);
        if (shorts) {
            a = fz_zigzag(q);
            uint64_t r = run << sh;
            run = 0;
            if (__builtin_expect(!(bit | regrain) && a < 0x10000 && (a >= 0x40 || (c != x->c0 && c[-1] == (uint8_t)(r | 1))), 1)) {
                uint16_t two = (uint16_t)a;
                r |= 1;
                if (__builtin_expect(r < 0x80, 1)) *c++ = (uint8_t)r;
                else c = fz_varint_fast(c, r);
                __builtin_memcpy(v, &two, 2);
                v += 2;
                if (idx && r < (8 << 2)) tab[4 * fused_entry(site_before) + 1] = ~w1; /* codec 11: after a short run, an index edge */
                continue;
            }
            if (__builtin_expect(r < 0x80, 1)) *c++ = (uint8_t)r;
            else c = fz_varint_fast(c, r);
        }
        if (!regrain) {
            a = fz_zigzag(q);
        } else { /* d != 0 here: the entry re-grains */
            e[2] = (uint64_t)__builtin_ctzll(d) ^ FUSED_G0;
            a = fz_zigzag(d);
            bit = 1;
        }
        uint8_t first = (uint8_t)((a & 0x3f) << 1 | bit);
        if (a < 0x40) {
            *t++ = first;
        } else {
            *t++ = first | 0x80;
            v = fz_varint_fast(v, a >> 6);
        }
        if (__builtin_expect(bit, 0)) {
            uint64_t zs = fz_zigzag(w1 - site_before);
            if (regrain) {
                *v++ = 1;
                v = fz_varint_fast(v, zs + 1);
            } else {
                v = fz_varint_fast(v, zs + 2);
            }
        }
    }
#undef SWITCH
    x->c = c;
    x->t = t;
    x->v = v;
    x->site = site;
    x->last = last;
    x->run = run;
    x->h = (size_t)(e - tab) / 4;
    x->records += (uint64_t)((size_t)(in - start) / 2 - (x->slots - slots0));
}

/* One copy per codec, each its own function: with both inlined in fused_pack, codec 7's hits ran 20 % slower. */
__attribute__((noinline, optimize("no-tree-vectorize", "omit-frame-pointer"))) static void pack7(struct fused *x, const uint64_t *in, const uint64_t *end)
{
    pack_records(x, in, end, 0, 0, 0, 0);
}

__attribute__((noinline, optimize("no-tree-vectorize", "omit-frame-pointer"))) static void pack9(struct fused *x, const uint64_t *in, const uint64_t *end)
{
    pack_records(x, in, end, 1, 0, 0, 0);
}

__attribute__((noinline, optimize("no-tree-vectorize", "omit-frame-pointer"))) static void pack10(struct fused *x, const uint64_t *in, const uint64_t *end)
{
    pack_records(x, in, end, 1, 1, 0, 0);
}

/* Codec 10 for a chunk of many sites (FUSED_MANY): each record also fetches the entry of the record FUSED_AHEAD on. */
/* A program of thousands of sites (python3: 5,000-10,000 in a chunk of 65,536 records) finds most entries of the */
/* 2.5 MB table out of cache; where a few hundred sites stay cached the fetch is a hash and a prefetch a record   */
/* for nothing. bench/runtime/mtr_stages.c on python3's chunks (thread CPU, ns a record), all records fetching:   */
/* chunks 100-199 (5,000-10,000 sites) 12.2-12.4 -> 10.4-10.9, chunks 400-599 (200-600 sites) 2.67 -> 3.24-3.32. */
/* The fetch was two records ahead, 10-20 ns before the entry is read, where a line from L3 or memory takes longer */
/* (issue 22, rewrite mode's python3 and sqlite3: the encoder is half their CPU): 16 ahead, the same bytes, the   */
/* rewritten programs' CPU with the trace to disk 0.935 -> 0.865 s (python3 JSON) and 0.175 -> 0.15 s (sqlite3's */
/* 500 inserts), medians of 6 interleaved runs at load 20 (docs/rewriting.md, "Where a rewritten run's CPU goes"). */
__attribute__((noinline, optimize("no-tree-vectorize", "omit-frame-pointer"))) static void pack10_many(struct fused *x, const uint64_t *in,
                                                                                                     const uint64_t *end)
{
    pack_records(x, in, end, 1, 1, 1, 0);
}

/* Codec 11: codec 10 with index edges. A short token (a record at its predicted site whose difference fits two */
/* bytes: a random index) makes its edge, the entry of the site before it, an index edge: its follower word is  */
/* ~site (no site has the top bit, so no hit can match it). The next record along an index edge at that site   */
/* whose difference fits two bytes is those two bytes in v and one more record of the run: no byte in c, no    */
/* token, and the run of hits goes on (spmv's inner loop, two hits and a random index, becomes one run a row: */
/* one byte of c a row where codec 10 wrote one a record). One whose difference is the entry's stride again  */
/* also makes the edge plain; one that does not fit is a token naming its site (the edge plain, ~site its      */
/* other follower). The period skip leaves a window with an index edge alone (period_hits).                   */
__attribute__((noinline, optimize("no-tree-vectorize", "omit-frame-pointer"))) static void pack11(struct fused *x, const uint64_t *in, const uint64_t *end)
{
    pack_records(x, in, end, 1, 1, 0, 1);
}

__attribute__((noinline, optimize("no-tree-vectorize", "omit-frame-pointer"))) static void pack11_many(struct fused *x, const uint64_t *in,
                                                                                                     const uint64_t *end)
{
    pack_records(x, in, end, 1, 1, 1, 1);
}

void fused_pack(struct fused *x, const uint64_t *in, const uint64_t *end, int events_only)
{
    if (events_only) { /* the access records are dropped: tags alone are written */
        while (in < end) {
            if (in[1] >> 63) {
                in += put_tag(x, in, end, x->run);
                x->run = 0;
            } else {
                x->dropped++;
                in += 2;
            }
        }
        return;
    }
    if (x->index) x->many_sites ? pack11_many(x, in, end) : pack11(x, in, end);
    else if (x->shift == 2 && x->many_sites) pack10_many(x, in, end);
    else if (x->shift == 2) pack10(x, in, end);
    else if (x->shift) pack9(x, in, end);
    else pack7(x, in, end);
}

size_t fused_end(struct fused *x, uint8_t *dst)
{
    x->c = fz_varint(x->c, x->run << x->shift);
    x->run = 0;
    return fz_payload(dst, x->c0, x->c, x->t0, x->t, x->v0, x->v);
}

/* n bytes from src to dst, none written past dst + n (fz_copy_words' overrun would reach into v). */
static inline void copy_exact(uint8_t *dst, const uint8_t *src, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        __builtin_memcpy(&w, src + i, 8);
        __builtin_memcpy(dst + i, &w, 8);
    }
    for (; i < n; i++) dst[i] = src[i];
}

uint8_t *fused_end_at_v(struct fused *x, size_t *len)
{
    x->c = fz_varint(x->c, x->run << x->shift);
    x->run = 0;
    size_t nc = (size_t)(x->c - x->c0), nt = (size_t)(x->t - x->t0), nv = (size_t)(x->v - x->v0);
    uint8_t head[24], *h = fz_varint(fz_varint(head, nc), nt);
    size_t nh = (size_t)(h - head);
    uint8_t *p = x->v0 - nt - nc - nh;
    copy_exact(p, head, nh);
    copy_exact(p + nh, x->c0, nc);
    copy_exact(p + nh + nc, x->t0, nt);
    *len = nh + nc + nt + nv;
    return p;
}
