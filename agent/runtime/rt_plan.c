/*
 * rt_plan.c: chunk boundaries of the .mtr writer (docs/compiled-in.md, "Chunk boundaries"; rt_writer.h lists
 * the writer's parts).
 *
 * A chunk is not a buffer: chunks end after records chosen by their content and the records after them (a
 * hash of two addresses, below), so that a skeleton build's trace, which lacks the records of its computed
 * loops, is cut into the same chunks as a full build's past them. A buffer's last chunk is finished by the
 * next buffer of its thread. The plan reads as the buffer's fields (rt.h, struct rt_buf): cuts[], prev,
 * prev_alone, tail and holds, which rt_codec.c encodes from.
 *
 * What it gets wrong: a thread's unfinished last chunk waits in its previous buffer for the next one: SIGKILL
 * loses it with the buffers. Chunk boundaries realign past a stretch of records one run has and another has
 * not only at a candidate a quarter buffer past it: in a stretch of hot addresses that hash below the
 * threshold (or of none that do) chunks end at a buffer's size, counted from a start that differs; and the
 * chunk around the stretch is other text in each run, which zstd may pack into a few more bytes in the run
 * with fewer records (docs/compiled-in.md, "Never larger"). Planning costs the thread that filled a buffer a
 * pass over it when it hands the buffer over (eight records a step with AVX-512 in the SIGSEGV handler's
 * hand-over, four elsewhere).
 */
#include <cpuid.h>
#include <immintrin.h>

#include "rt_writer.h"

/* ---- chunk boundaries ------------------------------------------------------------------------------ */
/*
 * A chunk (codecs 3 and 4) ends where the slots say, not where a buffer happens to fill. A *candidate* is
 * an access record whose address, hashed with the address of the access record before it, falls below a
 * threshold (one record in a buffer's slots does); the chunk ends after a candidate when the quarter
 * buffer of slots after it holds no other candidate. Failing that, where the chunk would pass a buffer's
 * size, it ends after its last candidate, else after its last *spare* record (a lower bar: one in a
 * sixteenth of a buffer), else there. Every decision looks only at the records after the cut, never at
 * how long ago the chunk began: two runs of one program whose records differ only in some stretches (a
 * skeleton build drops a loop's computed records and adds its entry and exit values) make the same
 * decisions at every candidate a quarter buffer or more past each stretch, so they cut at the first such
 * candidate both and then the same chunks; zstd, whose fast levels compress the same text differently
 * when it starts a few bytes further on, sees the same frames (docs/compiled-in.md, "Chunk boundaries").
 * A cut is decided up to a quarter buffer after its record, so it may fall in the previous buffer's tail.
 * A buffer's last, unfinished chunk is finished by the thread's next buffer: the buffer stays out of the
 * pool until that one is encoded (holds). Each thread plans its own buffers as it queues them (a plan
 * needs the one before: the tail, the candidates); the encoders only encode.
 */
static struct stream {
    volatile int tid;           /* 0: free; claimed by the thread's first buffer */
    struct rt_buf *pending;     /* a buffer whose tail the next buffer's first chunk begins with */
    size_t len;                 /* slots of the unfinished chunk */
    uint64_t before;            /* the address of the last access record */
    /* Where the unfinished chunk may end (NULL: nowhere yet), each with the chunk's slots up to there: */
    char *cand;                 /*   after its last record that hashed below `below` (a cut once `ahead` slots pass) */
    size_t cand_len;
    char *spare;                /*   after its last record that hashed below `spare`, if it reaches a buffer's size */
    size_t spare_len;
} streams[RT_MAX_THREADS];

/* The thread's stream, claimed on first use. Each thread plans only its own buffers, so a stream is */
/* touched by one thread at a time (and by the final flush once that thread cannot queue any more).  */
static struct stream *stream_of(uint32_t tid)
{
    for (int i = 0; i < RT_MAX_THREADS; i++)
        if (streams[i].tid == (int)tid) return &streams[i];
    for (int i = 0; i < RT_MAX_THREADS; i++) {
        int none = 0;
        if (streams[i].tid || !__atomic_compare_exchange_n(&streams[i].tid, &none, (int)tid, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            continue;
        streams[i].pending = NULL;
        streams[i].len = 0;
        streams[i].before = 0;
        streams[i].cand = streams[i].spare = NULL;
        return &streams[i];
    }
    return NULL;
}


/* Ends the unfinished chunk at `at` (in b, or in the previous buffer's tail), `at_len` of its `len` slots in. */
static size_t cut_at(struct rt_buf *b, struct stream *st, char *at, size_t at_len, size_t len)
{
    if (b->ncuts < RT_MAX_CUTS) b->cuts[b->ncuts++] = at;
    st->cand = NULL;
    if (st->spare) {
        if (st->spare_len <= at_len) st->spare = NULL;
        else st->spare_len -= at_len;
    }
    return len - at_len;
}

/* The cuts due before `need` more slots at `at`: the candidate once `ahead` slots followed it with no */
/* record below the threshold, and, while the chunk would pass `cap` slots, the candidate, else the   */
/* spare point, else `at`.                                                                              */
static size_t settle(struct rt_buf *b, struct stream *st, char *at, size_t len, size_t need, size_t cap, size_t ahead)
{
    if (st->cand && len >= st->cand_len + ahead) len = cut_at(b, st, st->cand, st->cand_len, len);
    while (len && len + need > cap) {
        if (st->cand) len = cut_at(b, st, st->cand, st->cand_len, len);
        else if (st->spare && st->spare_len < len) len = cut_at(b, st, st->spare, st->spare_len, len);
        else len = cut_at(b, st, at, len, len);
    }
    return len;
}

/* The slot count at which settle has something to do for one more record. */
static inline size_t due(const struct stream *st, size_t cap, size_t ahead)
{
    return st->cand && st->cand_len + ahead < cap ? st->cand_len + ahead : cap;
}

/* ---- eight records a step (AVX-512) --------------------------------------------------------------- */
/*
 * The plan's common case, eight access records with no tag, no hash below `spare` and no cut due, as one
 * group: the addresses and the sites taken apart (two permutes), each address's predecessor one lane over,
 * the eight hashes one multiply (vpmullq), their test one compare. The scalar loop's four a step took about
 * ten instructions a record (gemm: 14 % of the traced run's CPU, in the program's thread); eight a step, the
 * plan of gemm, spmv and smooth took 35-45 % less (about 0.25 ns an access; bench/results/encoder.md).
 * The same hashes and the same tests: the cuts do not change. Used only where the thread's vector state is
 * restored afterwards whatever the runtime does (rt_self.vectors_saved: the SIGSEGV handler's hand-over,
 * whose sigreturn restores every register): a rewritten program may call the runtime from code that saves
 * the SSE registers alone, whose upper halves AVX code would clobber (agent/Makefile's -mno-avx note).
 */
/* 1 when the CPU and the kernel support AVX-512 F and DQ (`-DRT_NO_AVX512`: never, to compare traces with). */
static int avx512_ok(void)
{
#ifdef RT_NO_AVX512
    return 0;
#endif
    static int known = -1;
    if (known >= 0) return known;
    unsigned a, b, c, d;
    int ok = 0;
    if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_OSXSAVE) && __get_cpuid_count(7, 0, &a, &b, &c, &d) &&
        (b & bit_AVX512F) && (b & bit_AVX512DQ)) {
        unsigned lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        ok = (lo & 0xe6) == 0xe6; /* SSE, AVX, the mask registers and both halves of the ZMM state enabled */
    }
    __atomic_store_n(&known, ok, __ATOMIC_RELAXED);
    return ok;
}

/* Eight records a step from `in` while 16 words remain, `len + 8 <= limit` and the group has no tag and no */
/* hash below `spare`; *len and *before follow. Returns where it stopped: the scalar loop takes it from there. */
__attribute__((target("avx512f,avx512dq"), noinline)) static const uint64_t *plan8(const uint64_t *in, const uint64_t *end, size_t *len,
                                                                                   size_t limit, uint64_t *before, uint64_t spare)
{
    const __m512i k = _mm512_set1_epi64((long long)0x9E3779B97F4A7C15ULL), sp = _mm512_set1_epi64((long long)spare);
    const __m512i even = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), odd = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
    __m512i prev = _mm512_set1_epi64((long long)*before); /* lane 7: the address before the group */
    const uint64_t *start = in;
    size_t n = *len;
    while (end - in >= 16 && n + 8 <= limit) {
        __m512i lo = _mm512_loadu_si512(in), hi = _mm512_loadu_si512(in + 8);
        __m512i sites = _mm512_permutex2var_epi64(lo, odd, hi);
        if (_mm512_movepi64_mask(sites)) break; /* a tag's top bit */
        __m512i a = _mm512_permutex2var_epi64(lo, even, hi);
        __m512i b = _mm512_alignr_epi64(a, prev, 7); /* each address's predecessor */
        __m512i m = _mm512_mullo_epi64(_mm512_xor_si512(a, _mm512_rol_epi64(b, 21)), k);
        if (_mm512_cmplt_epu64_mask(m, sp)) break;
        prev = a;
        in += 16;
        n += 8;
    }
    if (in != start) *before = in[-2];
    *len = n;
    return in;
}

/* Plans b's chunks over [from, used): its cuts (the first ones possibly in the previous buffer's tail, */
/* which its first chunk finishes) and its own tail. Runs in b's own thread when it queues b (or in the */
/* final flush, which that thread waits for), so a thread's buffers are planned in their order and the  */
/* encoders never wait for each other to plan.                                                           */
void wr_plan(struct rt_buf *b)
{
    b->prev = NULL;
    b->prev_alone = 0;
    b->ncuts = 0;
    b->tail = b->used;
    b->holds = 1;
    struct stream *st = wr.codec >= 3 ? stream_of(b->tid) : NULL;
    if (!st) return; /* older codecs (and a full table): a buffer is a chunk */
    /* One record in a buffer's slots hashes below `below`, one in a sixteenth below `spare`; a candidate */
    /* becomes a cut when a quarter of a buffer follows it without another one. (Measured on chase, gzip   */
    /* and gemm: one in half a buffer, or a sixteenth ahead, made more and smaller chunks that zstd packs   */
    /* into up to 1.5 % more bytes.)                                                                       */
    const size_t cap = rt.buf_size / 16, ahead = cap / 4;
    const uint64_t below = ~0ULL / cap, spare = ~0ULL / (cap / 16);
    size_t len = st->len;
    uint64_t before = st->before;
    b->prev = st->pending;
    if (b->prev && b->prev->events_only != b->events_only) {
        b->prev_alone = 1;
        len = 0;
        st->cand = st->spare = NULL;
    }
    /* Every slot passes here once: the common case (an access record, no cut due) is a compare, a */
    /* multiply, a compare and an increment.                                                       */
    size_t limit = due(st, cap, ahead);
    const uint64_t *in = (const uint64_t *)b->from, *end = (const uint64_t *)b->used;
    const int wide = rt_self.vectors_saved && avx512_ok();
    while (in < end) {
        if (wide) in = plan8(in, end, &len, limit, &before, spare);
        /* Four access records at a time while no cut is due among them: their four hashes, independent */
        /* multiplies, and one test of all four; the first record of a group that has a tag or a record  */
        /* below `spare` is taken one at a time, below. (spmv's plan: 40 -> 27 ms.)                       */
        while (end - in >= 8 && len + 4 <= limit && !((in[1] | in[3] | in[5] | in[7]) >> 63)) {
            const uint64_t k = 0x9E3779B97F4A7C15ULL;
            uint64_t a0 = in[0], a1 = in[2], a2 = in[4], a3 = in[6];
            uint64_t m0 = (a0 ^ (before << 21 | before >> 43)) * k, m1 = (a1 ^ (a0 << 21 | a0 >> 43)) * k;
            uint64_t m2 = (a2 ^ (a1 << 21 | a1 >> 43)) * k, m3 = (a3 ^ (a2 << 21 | a2 >> 43)) * k;
            uint64_t low = m0 < m1 ? m0 : m1, low2 = m2 < m3 ? m2 : m3;
            if (__builtin_expect((low < low2 ? low : low2) < spare, 0)) break;
            before = a3;
            in += 8;
            len += 4;
        }
        if (in >= end) break;
        uint64_t w1 = in[1];
        if (__builtin_expect(w1 >> 63, 0)) {
            size_t words = tag_words(in, end);
            len = settle(b, st, (char *)in, len, words / 2, cap, ahead) + words / 2;
            in += words;
            limit = due(st, cap, ahead);
            continue;
        }
        if (__builtin_expect(len >= limit, 0)) {
            len = settle(b, st, (char *)in, len, 1, cap, ahead);
            limit = due(st, cap, ahead);
        }
        uint64_t w0 = in[0], mixed = (w0 ^ (before << 21 | before >> 43)) * 0x9E3779B97F4A7C15ULL;
        before = w0;
        in += 2;
        len++;
        if (__builtin_expect(mixed < spare, 0)) {
            if (mixed < below) {
                st->cand = (char *)in;
                st->cand_len = len;
            }
            st->spare = (char *)in;
            st->spare_len = len;
            limit = due(st, cap, ahead);
        }
    }
    st->before = before;
    char *last_cut = b->ncuts ? b->cuts[b->ncuts - 1] : NULL;
    int cut_in_b = last_cut && last_cut >= b->from && last_cut <= b->used;
    /* No carry: the thread ended, or its last chunk would span three buffers (a short buffer: a stop, an */
    /* event that did not fit), or there are no slots.                                                   */
    if (b->last || (b->prev && !b->prev_alone && !cut_in_b) || b->used == b->from) {
        st->pending = NULL;
        st->len = 0;
        st->cand = st->spare = NULL;
        if (b->last) __atomic_store_n(&st->tid, 0, __ATOMIC_RELEASE);
        return;
    }
    b->tail = cut_in_b ? last_cut : b->from;
    st->pending = b;
    st->len = len;
    b->holds = 2;
}

/* Stream i given up (the final flush, a fork child's copy of the parent's): its pending buffer, if any. */
struct rt_buf *wr_plan_forget(int i)
{
    struct rt_buf *p = streams[i].pending;
    streams[i].tid = 0;
    streams[i].pending = NULL;
    return p;
}
