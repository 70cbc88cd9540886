/*
 * rt_period.c: codec 8, the period encoder (docs/trace-format.md, "Codec 8"). One pass over a thread's slots
 * predicts each access record from the slot k back in the chunk (the period): its site is that slot's site and
 * its address that slot's address plus that slot's difference (the one the predictor kept for it). A loop of k
 * sites at constant strides hits on every record without looking anything up but the slots themselves, which
 * are in the cache line being read: a hit is counted, a run of hits one varint in the run stream (c). Any other
 * record is a token, a byte in the token stream (t) and its further bytes in the value stream (v), naming its
 * site by the slot k back (P: the site came back, the address did not follow its stride: a random index), by a
 * slot j back within PERIOD_W (J: the period becomes j), or by its difference to the slot before (F: a site
 * not seen in the window, its address against a table of the last far address of each site's entry); the
 * address is a difference to that slot's (to the table's, for F), its granule (up to 3 trailing zero bits)
 * in the token, its value in 0, 1, 2 raw bytes or a varint. zstd at a fast level then compresses the streams.
 *
 * What it gets wrong: one period for the whole stream: a loop whose body takes two paths, or two loops of
 * other lengths that interleave, pays a J token at each switch; F's table is written by far tokens only, so
 * a site that was predicted for a long while comes back out of the window against an old address; a
 * random index costs its difference's bits rounded up to bytes (zstd's fast levels store literals as they are).
 */
#include "rt_period.h"

#include <stddef.h>

void period_begin(struct period *x, uint8_t *c, uint8_t *t, uint8_t *v)
{
    uint64_t *tab = x->table;
    if (x->ntouched >= ((size_t)1 << FUSED_BITS)) {
        for (size_t i = 0; i < ((size_t)1 << FUSED_BITS); i++) tab[i] = 0;
    } else {
        for (size_t i = 0; i < x->ntouched; i++) tab[x->touched[i]] = 0;
    }
    x->ntouched = 0;
    for (size_t i = 0; i < 2 * PERIOD_W; i++) x->hist[i] = 0;
    for (size_t i = 0; i < PERIOD_W; i++) x->hist_dd[i] = 0;
    x->c = x->c0 = c;
    x->t = x->t0 = t;
    x->v = x->v0 = v;
    x->k = 1;
    x->run = 0;
    x->records = x->dropped = 0;
    x->slots = 0;
}

/* The slot j back from slot i of this run (lo its first): in the run, or in the chunk's history before it. */
static inline const uint64_t *back(const struct period *x, const uint64_t *lo, size_t i, size_t j)
{
    return i >= j ? lo + 2 * (i - j) : x->hist + 2 * (PERIOD_W - (j - i));
}

static inline uint64_t back_dd(const struct period *x, size_t i, size_t j)
{
    return i >= j ? x->dd[i - j] : x->hist_dd[PERIOD_W - (j - i)];
}

/* The first j in [1, lim) whose slot j back from slot i has site w1; lim when none has. */
static inline size_t find(const struct period *x, const uint64_t *lo, size_t i, uint64_t w1, size_t lim)
{
    size_t j = 1;
    if (i + 1 >= lim) { /* all in this run */
        const uint64_t *q = lo + 2 * i + 1;
        while (j < lim && q[-2 * (ptrdiff_t)j] != w1) j++;
        return j;
    }
    while (j < lim && back(x, lo, i, j)[1] != w1) j++;
    return j;
}

/* A tag and its event slots as they are: a run, the token byte 3, the words in v. Returns the words read. */
static inline size_t put_tag(struct period *x, const uint64_t *in, const uint64_t *end, uint64_t run)
{
    size_t n = fz_tag_words(in, end);
    x->c = fz_varint(x->c, run);
    *x->t++ = PERIOD_TAG;
    x->v = fz_copy_words(x->v, (const uint8_t *)in, 8 * n);
    x->slots += n / 2;
    return n;
}

/* The last PERIOD_W slots of the chunk after a run of n slots at lo (and their differences). */
static void keep_history(struct period *x, const uint64_t *lo, size_t n)
{
    if (n < PERIOD_W) {
        size_t keep = PERIOD_W - n;
        for (size_t i = 0; i < 2 * keep; i++) x->hist[i] = x->hist[i + 2 * n];
        for (size_t i = 0; i < keep; i++) x->hist_dd[i] = x->hist_dd[i + n];
        for (size_t i = 0; i < 2 * n; i++) x->hist[2 * keep + i] = lo[i];
        for (size_t i = 0; i < n; i++) x->hist_dd[keep + i] = x->dd[i];
        return;
    }
    for (size_t i = 0; i < 2 * PERIOD_W; i++) x->hist[i] = lo[2 * (n - PERIOD_W) + i];
    for (size_t i = 0; i < PERIOD_W; i++) x->hist_dd[i] = x->dd[n - PERIOD_W + i];
}

/* Every slot passes here once. A hit: the slot's two words, the site and address k back and that slot's */
/* difference (three loads from lines just read), two compares, a store of the difference and a count.    */
__attribute__((optimize("no-tree-vectorize", "omit-frame-pointer"))) void period_pack(struct period *x, const uint64_t *in, const uint64_t *end, int events_only)
{
    if (events_only) { /* the access records are dropped: tags alone are written (no token refers back) */
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
    const uint64_t *lo = in, *p = in;
    uint64_t *dd = x->dd, *tab = x->table;
    uint8_t *c = x->c, *t = x->t, *v = x->v;
    uint64_t k = x->k, run = x->run;
    size_t i = 0, slots0 = x->slots;
    while (p < end) {
        if (__builtin_expect(i >= PERIOD_W, 1)) {
            /* Past the window's first slots the slot k back is in this run: the hits' own loop, no bounds, */
            /* no tag test (a tag's sequence number never repeats its difference of 0 k slots back).       */
            const uint64_t *r = p - 2 * k;
            uint64_t *dp = dd + i;
            const uint64_t *e = end;
            while (p < e && p[1] == r[1] && p[0] - r[0] == dp[-(ptrdiff_t)k]) {
                *dp++ = p[0] - r[0];
                p += 2;
                r += 2;
            }
            run += (uint64_t)(dp - (dd + i));
            i = (size_t)(dp - dd);
            if (p >= end) break;
        }
        uint64_t w0 = p[0], w1 = p[1], d, kind, extra = 0;
        if (__builtin_expect(w1 >> 63, 0)) {
            x->c = c;
            x->t = t;
            x->v = v;
            size_t n = put_tag(x, p, end, run);
            c = x->c;
            t = x->t;
            v = x->v;
            run = 0;
            for (size_t s = 0; s < n / 2; s++) dd[i + s] = 0;
            p += n;
            i += n / 2;
            continue;
        }
        const uint64_t *r;
        uint64_t rd;
        if (__builtin_expect(i >= k, 1)) {
            r = p - 2 * k;
            rd = dd[i - k];
        } else {
            r = back(x, lo, i, k);
            rd = back_dd(x, i, k);
        }
        if (w1 == r[1] && w0 - r[0] == rd) { /* a hit in the window's first slots, or right after a token */
            dd[i++] = rd;
            p += 2;
            run++;
            continue;
        }
        /* A miss names its site by its latest slot in the window: when the slot k back has it, only the */
        /* slots under min(k, 9) back are searched (a period that is a multiple of the loop's is left at  */
        /* once), else the whole window; not found, the site is far (F).                                   */
        size_t j = w1 == r[1] ? find(x, lo, i, w1, k < 9 ? k : 9) : find(x, lo, i, w1, PERIOD_W + 1);
        if (w1 == r[1] && j == (k < 9 ? k : 9)) j = k;
        if (j <= PERIOD_W) {
            kind = j == k ? PERIOD_P : PERIOD_J;
            d = w0 - back(x, lo, i, j)[0];
            k = j;
            extra = j;
        } else {
            kind = PERIOD_F;
            extra = fz_zigzag(w1 - back(x, lo, i, 1)[1]);
            size_t h = fused_entry(w1);
            if (!tab[h] && x->ntouched < ((size_t)1 << FUSED_BITS)) x->touched[x->ntouched++] = (uint32_t)h;
            d = w0 - tab[h];
            tab[h] = w0;
        }
        dd[i++] = d;
        p += 2;
        c = fz_varint_fast(c, run);
        run = 0;
        uint64_t g = (uint64_t)__builtin_ctzll(d | 8), a = fz_zigzag((uint64_t)((int64_t)d >> g)), len;
        if (kind == PERIOD_J) *v++ = (uint8_t)extra;
        else if (kind == PERIOD_F) v = fz_varint_fast(v, extra);
        if (__builtin_expect(a < 0x10000, 1)) { /* 0, 1 or 2 bytes without a branch: a random index's length is random */
            len = (uint64_t)(a != 0) + (uint64_t)(a > 0xff);
            uint16_t two = (uint16_t)a;
            __builtin_memcpy(v, &two, 2);
            v += len;
        } else {
            len = 3;
            v = fz_varint_fast(v, a);
        }
        *t++ = (uint8_t)(kind | g << 2 | len << 4);
    }
    keep_history(x, lo, i);
    x->c = c;
    x->t = t;
    x->v = v;
    x->k = k;
    x->run = run;
    x->records += (uint64_t)(i - (x->slots - slots0));
}

size_t period_end(struct period *x, uint8_t *dst)
{
    x->c = fz_varint(x->c, x->run);
    x->run = 0;
    return fz_payload(dst, x->c0, x->c, x->t0, x->t, x->v0, x->v);
}
