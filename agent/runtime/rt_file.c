/*
 * rt_file.c: the .mtr writer of libmemtrace-rt.so (docs/compiled-in.md, "The .mtr file").
 *
 * A full buffer is queued here by the thread that filled it, which takes a free buffer and goes on; a
 * writer thread (on the second core, when there is one) takes buffers off the queue in order, turns the
 * slots into chunk payloads and appends the chunks to the file. When the writer is more than about two
 * buffers per thread behind, a producer that needs a free buffer encodes the next queued one itself (a
 * second encoder, one such helper at a time) instead of sleeping, so both cores encode; every buffer taken
 * gets a ticket in queue order and chunks reach the file in ticket order. Nothing is ever dropped for speed.
 *
 * A chunk is not a buffer: chunks end after records chosen by their content and the records after them (a
 * hash of two addresses, see "chunk boundaries" below), so that a skeleton build's trace, which lacks the
 * records of its computed loops, is cut into the same chunks as a full build's past them.
 * A buffer's last chunk is finished by the next buffer of its thread.
 *
 * A payload is codec 7 by default: rt_fused.c's one pass per chunk, which folds the records a site's stride
 * predicts into run counts and writes the others as codec 6's tokens in two streams, zstd at level -3
 * (ZLEVEL_FUSED; docs/trace-format.md, "Codec 7"). Codec 6 is codec 5, below, with
 * each site's granule, the trailing zero bits its differences share, taken out of them (pack_scaled). Codec 5 is codec 4 with tables of 65,536 entries instead of 4,096: every access slot becomes one varint, its address's difference to the
 * previous address of a site hashed to the same table entry, when its site is the one that followed the
 * previous record's site last time (the table remembers it), else that varint flagged and the site's
 * difference as a second one (tag slots and their event records pass as they are); the chunk is one zstd
 * frame at level -3 (ZLEVEL_PACKED). A regular loop packs into a byte or two per access that repeat and zstd
 * stores in almost nothing; an irregular one still gives zstd about a ninth of the bytes the slots take.
 * MEMTRACE_CODEC=3 writes codec 4 without the site prediction, 2 the older site-delta slots at level 3
 * (ZLEVEL), 1 plain zstd of the slots, 0 the slots as they are (all there to measure the transforms). The
 * output reads:
 *
 *     header (64 bytes)  CHNK tid order stored raw codec crcs payload  CHNK ...  EEND crc chunks records dropped
 *
 * (include/mt_file.h lays the records out: version 2, every header and payload with its CRC32C, rt_crc.c).
 * A write that fails (a full disk, a file size limit) is said once on stderr; nothing more is written, so
 * the file ends without its end record and readers say it is incomplete.
 *
 * The end record closes a file whose every buffer was written: at exit, before an exec, and after a
 * fatal signal the runtime caught. A file killed by SIGKILL just stops after its last whole chunk (or in
 * the middle of one being written).
 *
 * What it gets wrong: at exit (and on a fatal signal) the buffers of the other threads are written while
 * those threads run on, so what they store after that moment is lost; a buffer another thread fills in
 * the middle of the final flush is dropped. A thread's unfinished last chunk waits in its previous buffer
 * for the next one: SIGKILL loses it with the buffers. Chunk boundaries realign past a stretch of records
 * one run has and another has not only at a candidate a quarter buffer past it: in a stretch of hot
 * addresses that hash below the threshold (or of none that do) chunks end at a buffer's size, counted from
 * a start that differs; and the chunk around the stretch is other text in each run, which zstd may pack
 * into a few more bytes in the run with fewer records; two builds whose sites lie at other addresses still
 * collide in codec 5's tables a little and store other site distances, so their traces of the same records
 * differ by a few bytes either way (docs/compiled-in.md, "Never larger"). Planning costs the thread that filled a buffer a
 * pass over it (about 1 ns a record) when it hands the buffer over.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "mt_file.h"
#include "rt.h"
#include "rt_fused.h"

#define MAX_BUFS 4096
#define TABLE_BITS 12
/* Codec 5's tables: 4096 entries held a program of many sites badly (sqlite3: 1.0 M of 3.3 M records'  */
/* sites mispredicted, 0.35 M with 2^20 entries), and two builds whose sites lie at other addresses (full */
/* and skeleton) collided differently, so their traces differed by ±1 % for nothing they recorded.       */
#define WIDE_BITS 16
/* zstd level: level 1's fast strategy misses the 16-byte periods of delta-coded loop records (a GEMM */
/* chunk: 53 KB at level 1, 192 bytes at level 3) and then spends its time emitting literals, so level */
/* 3 is both smaller and faster on regular loops (bench/cc.sh: gemm to disk 0.52 s -> 0.10 s).        */
#ifndef ZLEVEL
#define ZLEVEL 3
#endif
/* Codecs 3 and 4 pack into bytes with no 16-byte periods to miss: the fast levels suit them. On irregular  */
/* traces zstd is most of the writer's time; codec 4 on gzip -6 (37.9 M accesses, zstd CPU / bytes per     */
/* access): level 1 216 ms / 0.72, -1 173 / 0.82, -3 155 / 0.87, -5 139 / 0.95; regular loops cost almost   */
/* nothing at any level. -3 keeps every program far under 2 bytes an access (docs/compiled-in.md).          */
#ifndef ZLEVEL_PACKED
#define ZLEVEL_PACKED (-3)
#endif
/* Codec 7 (rt_fused.c) gives zstd three streams whose bytes are mostly literals (a random index's bits): at */
/* the fast levels zstd stores literals as they are unless told to Huffman-code them (FUSED_HUFFMAN=1), which */
/* on spmv costs 0.7 ns of zstd an access and saves 0.11 bytes (0.74 -> 0.63; the bound is 0.45). It stays   */
/* off: Huffman code lengths follow the byte values, the sites' differences among them, so a skeleton build  */
/* (its sites elsewhere) compressed the same records past a computed stretch into chunks a byte or two       */
/* longer or shorter than the full build's (SkeletonSizeTest), and the CPU is what issue 27 binds first.     */
#define ZLEVEL_FUSED (-3)
#ifndef FUSED_HUFFMAN
#define FUSED_HUFFMAN 0
#endif

static struct {
    int codec;
    long end_offset;            /* where the end record starts, for a failed exec */
    uint64_t chunks, records, dropped;
    rt_lock file_lock;          /* the file, the scratch buffers and the zstd context */
    rt_lock queue_lock;         /* the queue and the pool */
    struct rt_buf *head, *tail; /* queued full buffers, oldest first */
    volatile int queued;        /* futex: buffers in the queue */
    volatile int pool_gen;      /* futex: bumped when a buffer comes back */
    struct rt_buf *free_list;
    struct rt_buf *descs;
    int ndescs;
    int nbufs;                  /* buffers in existence */
    volatile int next_ticket;   /* queued buffers taken for encoding, in queue order (under queue_lock) */
    volatile int appended;      /* futex: tickets whose chunks are in the file */
    int writer_running;
    uint64_t wait_ns, waits, buffers; /* the program's threads waiting for a free buffer (MT_WRITER) */
    int broken;                 /* zstd or a write failed: nothing more is written */
    const char *path;           /* the trace's name, for the message of a failed write */
} f;

/* What turns slots into a chunk: encoder 0 belongs to the writer thread (and to the final flush), encoder 1 */
/* to a program thread that would otherwise wait for a free buffer. Each encodes on its own; the chunks    */
/* reach the file in the order their buffers were queued (tickets).                                        */
struct encoder {
    rt_lock lock;
    char *scratch;              /* the transformed slots */
    char *packed;               /* the zstd frame */
    size_t packed_cap;
    ZSTD_CCtx *cctx;
    void *work;                 /* the context's memory: zstd never calls the (wrapped) allocator */
    size_t work_size;
    uint64_t *table;
    /* Codecs 4 and 5: the table entries the current chunk has set, so the next chunk clears those alone */
    /* (codec 5's table is 1 MB: clearing it whole per chunk cost bzip2's traced run 13 % more CPU).      */
    uint32_t *touched;
    size_t ntouched;
    uint64_t records, dropped;  /* what the last packed or transformed run of slots counted */
    struct fused fz;            /* codec 7: its table is `table`, its list `touched`; its three streams: */
    uint8_t *streams;           /*   run stream, token stream, value stream, one mapping */
    /* The chunks of the last encoded buffer, in order: payload, sizes and what each counted. */
    int npieces;
    size_t packed_used;         /* bytes of `packed` the pieces' frames take */
    struct piece {
        const char *payload;
        size_t stored, raw;
        uint64_t records, dropped;
    } piece[RT_MAX_CUTS + 2];
};
static struct encoder enc[2];

/* `make CFLAGS="-O2 -g -DRT_PROFILE"`: CPU time of each stage (thread CPU clock), printed at the end. */
#ifdef RT_PROFILE
static uint64_t prof_ns[5]; /* plan, pack, zstd, write (ns); packed bytes */
static inline uint64_t prof_now(void)
{
    struct timespec t;
    mt_sys2(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
#define PROF_START uint64_t prof_t0 = prof_now()
#define PROF_END(i) __atomic_add_fetch(&prof_ns[i], prof_now() - prof_t0, __ATOMIC_RELAXED)
#else
#define PROF_START do {} while (0)
#define PROF_END(i) do {} while (0)
#endif

static void write_queued(struct rt_buf *b);
static void plan(struct rt_buf *b);
static int help_writer(void);

static void futex_wait(volatile int *word, int value, long ns)
{
    struct timespec t = {0, ns};
    mt_sys6(SYS_futex, (long)word, FUTEX_WAIT_PRIVATE, value, (long)&t, 0, 0);
}

static void futex_wake(volatile int *word) { mt_sys6(SYS_futex, (long)word, FUTEX_WAKE_PRIVATE, 1 << 30, 0, 0, 0); }

/* ---- buffers -------------------------------------------------------------------------------------- */

static struct rt_buf *new_buffer(void)
{
    if (!f.descs) f.descs = rt_map(MAX_BUFS * sizeof *f.descs);
    if (!f.descs || f.ndescs == MAX_BUFS) return NULL;
    char *m = rt_map(rt.buf_size + (size_t)rt.page);
    if (!m) return NULL;
    mt_sys3(SYS_mprotect, m + rt.buf_size, rt.page, PROT_NONE);
    struct rt_buf *b = &f.descs[f.ndescs++];
    b->base = m;
    b->end = m + rt.buf_size;
    f.nbufs++;
    return b;
}

static uint64_t monotonic_ns(void)
{
    struct timespec t;
    mt_sys2(SYS_clock_gettime, CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The wait a buffer cost, once one was found after none was free (`since` 0: none was missing). */
static void waited(uint64_t since)
{
    if (!since) return;
    __atomic_add_fetch(&f.wait_ns, monotonic_ns() - since, __ATOMIC_RELAXED);
    __atomic_add_fetch(&f.waits, 1, __ATOMIC_RELAXED);
}

struct rt_buf *rt_buf_get(void)
{
    uint64_t since = 0; /* when the program began to wait for the writer */
    for (;;) {
        int gen = f.pool_gen;
        rt_lock_take(&f.queue_lock);
        struct rt_buf *b = f.free_list;
        if (b) f.free_list = b->next;
        else if (!rt.to_file || rt.state != RT_RUNNING || f.nbufs < 2 * rt.live_threads + 4) b = new_buffer();
        rt_lock_drop(&f.queue_lock);
        if (!b && (f.ndescs == MAX_BUFS || !f.writer_running)) {
            /* no writer to wait for (or no room for one more): the program must go on with a new buffer; */
            /* it was `continue`d here, which left it out of the pool and took another, up to MAX_BUFS    */
            if (!since) since = monotonic_ns();
            rt_lock_take(&f.queue_lock);
            b = new_buffer();
            rt_lock_drop(&f.queue_lock);
            if (!b) mt_sys2(SYS_exit_group, 127, 0); /* no memory at all for a buffer: nothing sane is left */
        }
        if (b) {
            b->next = NULL;
            b->from = b->base;
            b->used = b->base;
            b->events_only = 0;
            b->last = 0;
            b->prev = NULL;
            b->ncuts = 0;
            waited(since);
            return b;
        }
        if (!since) since = monotonic_ns();
        if (help_writer()) continue;
        futex_wait(&f.pool_gen, gen, 10 * 1000 * 1000);
    }
}

void rt_buf_put(struct rt_buf *b)
{
    rt_lock_take(&f.queue_lock);
    b->next = f.free_list;
    f.free_list = b;
    rt_lock_drop(&f.queue_lock);
    __atomic_add_fetch(&f.pool_gen, 1, __ATOMIC_RELEASE);
    futex_wake(&f.pool_gen);
}

void rt_file_queue(struct rt_buf *b)
{
    __atomic_add_fetch(&f.buffers, 1, __ATOMIC_RELAXED);
    {
        PROF_START;
        plan(b);
        PROF_END(0);
    }
    MT_DEBUG_ONLY(rt_check_buf(b));
    if (!f.writer_running) {
        int saved = rt_self.internal;
        rt_self.internal = 1;
        rt_lock_take(&f.file_lock);
        write_queued(b);
        rt_lock_drop(&f.file_lock);
        rt_self.internal = saved;
        return;
    }
    b->next = NULL;
    rt_lock_take(&f.queue_lock);
    if (f.tail) f.tail->next = b;
    else f.head = b;
    f.tail = b;
    rt_lock_drop(&f.queue_lock);
    __atomic_add_fetch(&f.queued, 1, __ATOMIC_RELEASE);
    futex_wake(&f.queued);
}

/* The oldest queued buffer, taken off the queue; NULL when it is empty. f.queue_lock held. */
static struct rt_buf *pop_locked(void)
{
    struct rt_buf *b = f.head;
    if (b) {
        f.head = b->next;
        if (!f.head) f.tail = NULL;
        __atomic_sub_fetch(&f.queued, 1, __ATOMIC_RELEASE);
    }
    return b;
}

static struct rt_buf *dequeue(void)
{
    rt_lock_take(&f.queue_lock);
    struct rt_buf *b = pop_locked();
    rt_lock_drop(&f.queue_lock);
    return b;
}

/* ---- chunks --------------------------------------------------------------------------------------- */

/* The first failed write of the trace: one line on stderr, and nothing more is written. A write past the */
/* file size limit (EFBIG) also sent the writing thread SIGXFSZ, whose default ends the program: every    */
/* write of the trace runs with signals blocked (the writer thread, the final flush, open_out), so the    */
/* signal is still pending here, and is taken back: the limit cuts the trace, not the program.            */
static void write_failed(long error)
{
    if (error == -27) {
        uint64_t xfsz = 1ULL << (SIGXFSZ - 1);
        struct timespec zero = {0, 0};
        while (mt_sys4(SYS_rt_sigtimedwait, &xfsz, 0, &zero, 8) == SIGXFSZ) {}
    }
    if (f.broken) return;
    f.broken = 1;
    char msg[4300];
    size_t at = 0;
    const char *parts[] = {"memtrace: cannot write the trace ", f.path ? f.path : "", ": ",
                           error == -28 ? "no space left on device" : error == -27 ? "file too large"
                           : error == -5 ? "input/output error" : error == -122 ? "disk quota exceeded" : "write failed",
                           "; it stops here and is incomplete (the program runs on)\n"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        for (const char *c = parts[i]; *c && at < sizeof msg; c++) msg[at++] = *c;
    mt_sys3(SYS_write, 2, msg, at);
}

static int write_all(const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        if (f.broken) return 0;
        int fd = rt_fd_get();
        if (fd < 0) {
            write_failed(-9 /* EBADF */);
            return 0;
        }
        long w = mt_sys3(SYS_write, fd, c, n);
        if (w == -4) continue; /* EINTR */
        if (w <= 0) {
            write_failed(w ? w : -28);
            return 0;
        }
        c += w;
        n -= (size_t)w;
    }
    return 1;
}

/* A tag and the event slots after it, in u64 words: fewer if the buffer ends first (every codec copies them as they are). */
static inline size_t tag_words(const uint64_t *in, const uint64_t *end)
{
    size_t n = 2 + ((((in[1] >> 8) & 0xffff) + 15) / 16) * 2;
    return in + n > end ? (size_t)(end - in) : n;
}

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
    if (f.codec == 5) return pack_slots(x, ps, s, e, dst, events_only, raw, 1, WIDE_BITS);
    return f.codec == 4 ? pack_slots(x, ps, s, e, dst, events_only, raw, 1, TABLE_BITS)
                        : pack_slots(x, ps, s, e, dst, events_only, raw, 0, TABLE_BITS);
}

/* The bits of a packing codec's table index: codec 5's 65,536 entries, codecs 3 and 4's 4,096. */
static inline int table_bits(int codec) { return codec >= 5 ? WIDE_BITS : TABLE_BITS; }

/* Words per table entry: codec 3's 1, 4's and 5's 2, 6's and 7's 4. */
static inline size_t entry_words(int codec) { return codec == 3 ? 1 : codec >= 6 ? 4 : 2; }

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

/* One chunk from a thread's slots [s1, e1) followed by [s2, e2) (a buffer's tail and the next buffer's head; */
/* codecs 3 and 4 only) into the encoder's next piece, transformed in place when the buffer is ours (queued), */
/* else into scratch (another thread's live buffer at the end). A piece with no slots to write is counted    */
/* (dropped records) but not written.                                                                         */
static void encode_piece(struct encoder *x, const char *s1, const char *e1, const char *s2, const char *e2, int events_only,
                         int in_place)
{
    struct piece *pc = &x->piece[x->npieces++];
    pc->records = pc->dropped = pc->raw = pc->stored = 0;
    if (f.broken) return;
    int codec = f.codec;
    char *raw_data = in_place && codec < 3 ? (char *)s1 : x->scratch;
    size_t raw, input;
    if (codec == 7) {
        size_t room = rt.buf_size / 16 + 4096; /* slots of a chunk, and a margin for its last tag */
        uint8_t *c = x->streams, *t = c + fused_room_ct(room);
        PROF_START;
        fused_begin(&x->fz, c, t, t + fused_room_ct(room));
        fused_pack(&x->fz, (const uint64_t *)s1, (const uint64_t *)e1, events_only);
        if (e2 > s2) fused_pack(&x->fz, (const uint64_t *)s2, (const uint64_t *)e2, events_only);
        input = fused_end(&x->fz, (uint8_t *)raw_data);
        PROF_END(1);
#ifdef RT_PROFILE
        __atomic_add_fetch(&prof_ns[4], input * 1000000, __ATOMIC_RELAXED);
#endif
        pc->records = x->fz.records;
        pc->dropped = x->fz.dropped;
        raw = (x->fz.slots + x->fz.records) * 16;
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
        size_t z = codec == 7 ? ZSTD_compress2(x->cctx, dst, x->packed_cap - x->packed_used, raw_data, input)
                              : ZSTD_compressCCtx(x->cctx, dst, x->packed_cap - x->packed_used, raw_data, input,
                                                  codec >= 3 ? ZLEVEL_PACKED : ZLEVEL);
        PROF_END(2);
        if (ZSTD_isError(z)) { /* cannot happen with a static context sized for ZLEVEL: stop writing */
            static const char msg[] = "memtrace: zstd failed; the trace stops here\n";
            mt_sys3(SYS_write, 2, msg, sizeof msg - 1);
            f.broken = 1;
            pc->raw = 0;
            return;
        }
        pc->payload = dst;
        pc->stored = z;
        x->packed_used += z;
    }
}

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

static void release(struct rt_buf *b)
{
    if (__atomic_sub_fetch(&b->holds, 1, __ATOMIC_ACQ_REL) == 0) rt_buf_put(b);
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

/* Plans b's chunks over [from, used): its cuts (the first ones possibly in the previous buffer's tail, */
/* which its first chunk finishes) and its own tail. Runs in b's own thread when it queues b (or in the */
/* final flush, which that thread waits for), so a thread's buffers are planned in their order and the  */
/* encoders never wait for each other to plan.                                                           */
static void plan(struct rt_buf *b)
{
    b->prev = NULL;
    b->prev_alone = 0;
    b->ncuts = 0;
    b->tail = b->used;
    b->holds = 1;
    struct stream *st = f.codec >= 3 ? stream_of(b->tid) : NULL;
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
    while (in < end) {
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

/* Encodes b's chunks as planned (into x's pieces); the previous buffer, once its tail is read, is let go. */
static void encode_buffer_now(struct encoder *x, struct rt_buf *b, int in_place);

/* Rewritten libc that zstd calls (memcpy) records into the sink, in whichever thread encodes: a program */
/* thread encodes from inside its full-buffer fault, its cursor at the guard (agent/rewrite/rw_apply.c). */
static void encode_buffer(struct encoder *x, struct rt_buf *b, int in_place)
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
    if (p && b->prev_alone) encode_piece(x, p->tail, p->used, 0, 0, p->events_only, 1);
    int joined = p && !b->prev_alone;   /* the chunk being cut began in p's tail */
    const char *s = joined ? p->tail : b->from;
    for (int i = 0; i <= b->ncuts; i++) {
        const char *e = i < b->ncuts ? b->cuts[i] : b->tail;
        if (joined && e >= p->base && e <= p->end) { /* a cut inside p's tail */
            encode_piece(x, s, e, 0, 0, p->events_only, 1);
            s = e;
            continue;
        }
        if (joined) encode_piece(x, s, p->used, b->from, e, b->events_only, in_place);
        else if (e > s) encode_piece(x, s, e, 0, 0, b->events_only, in_place);
        joined = 0;
        s = e;
    }
    if (p) release(p);
    b->prev = NULL;
}

/* The encoder's chunks at the end of the file; one appender at a time (tickets, or the final flush alone). */
static void append(struct encoder *x, uint32_t tid)
{
    for (int i = 0; i < x->npieces; i++) {
        struct piece *pc = &x->piece[i];
        __atomic_add_fetch(&f.records, pc->records, __ATOMIC_RELAXED);
        __atomic_add_fetch(&f.dropped, pc->dropped, __ATOMIC_RELAXED);
        if (!pc->raw) continue;
        if (f.broken) continue;
        struct mtr_chunk_header h = {MTR_CHUNK_MAGIC, tid, f.chunks++, (uint32_t)pc->stored, (uint32_t)pc->raw, (uint32_t)f.codec,
                                     rt_crc32c(0, pc->payload, pc->stored), 0, 0};
        h.header_crc = rt_crc32c(0, &h, offsetof(struct mtr_chunk_header, header_crc));
        MT_DEBUG_ONLY(rt_check_chunk(&h, pc->payload, f.codec));
        static const char zeros[8];
        struct iovec iov[3] = {{&h, sizeof h}, {(void *)pc->payload, pc->stored}, {(void *)zeros, (8 - pc->stored % 8) % 8}};
        size_t total = iov[0].iov_len + iov[1].iov_len + iov[2].iov_len;
        PROF_START;
        rt_fd_hold(); /* a dup2 onto the trace's number waits for the write */
        int fd = rt_fd_get();
        long w = fd < 0 ? -9 /* EBADF */ : mt_sys3(SYS_writev, fd, iov, 3);
        while (w == -4) w = mt_sys3(SYS_writev, fd, iov, 3); /* EINTR: nothing was written */
        rt_fd_release();
        PROF_END(3);
        if (w < 0) write_failed(w);
        else if ((size_t)w < total) { /* a short write: finish it byte-exactly */
            size_t done = (size_t)w;
            for (int k = 0; k < 3; k++) {
                if (done >= iov[k].iov_len) { done -= iov[k].iov_len; continue; }
                write_all((const char *)iov[k].iov_base + done, iov[k].iov_len - done);
                done = 0;
            }
        }
    }
    x->npieces = 0;
}

/* A buffer off the queue (planned when it was queued) while no ticket is handed out: written and let go. */
static void write_queued(struct rt_buf *b)
{
    encode_buffer(&enc[0], b, 1);
    append(&enc[0], b->tid);
    release(b);
}

/* The oldest queued buffer and its ticket, while the process runs (the final flush drains the rest). */
static struct rt_buf *take_ticket(int *ticket)
{
    rt_lock_take(&f.queue_lock);
    struct rt_buf *b = rt.state == RT_RUNNING ? pop_locked() : NULL;
    if (b) *ticket = f.next_ticket++;
    rt_lock_drop(&f.queue_lock);
    return b;
}

/* Encodes a ticketed buffer's chunks with x, waits for the chunks before it, appends, and lets the buffer go. */
static void encode_in_turn(struct encoder *x, struct rt_buf *b, int ticket)
{
    encode_buffer(x, b, 1);
    for (int seen; (seen = __atomic_load_n(&f.appended, __ATOMIC_ACQUIRE)) != ticket;) futex_wait(&f.appended, seen, 1000 * 1000);
    append(x, b->tid);
    __atomic_store_n(&f.appended, ticket + 1, __ATOMIC_RELEASE);
    futex_wake(&f.appended);
    release(b);
}

/* A program thread that would wait for a free buffer encodes a queued one instead (encoder 1, if free):  */
/* then both cores encode while the writer is behind. Returns 1 when it freed a buffer.                    */
static int help_writer(void)
{
    int none = 0;
    if (!__atomic_compare_exchange_n(&enc[1].lock.owner, &none, rt_tid(), 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return 0;
    int ticket;
    struct rt_buf *b = take_ticket(&ticket);
    if (b) {
        int saved = rt_self.internal;
        rt_self.internal = 1; /* zstd's memcpy is the program's wrapped one: no events from it */
        encode_in_turn(&enc[1], b, ticket);
        rt_self.internal = saved;
    }
    rt_lock_drop(&enc[1].lock);
    return b != NULL;
}

static void *writer_main(void *arg)
{
    (void)arg;
    rt_self.internal = 1;
    rt_block_signals(); /* the program's signals are for its own threads */
    for (;;) {
        if (!f.queued) { futex_wait(&f.queued, 0, 100 * 1000 * 1000); continue; }
        int ticket;
        struct rt_buf *b = take_ticket(&ticket);
        if (!b) { /* the final flush drains the queue */
            struct timespec ms = {0, 1000 * 1000};
            mt_sys2(SYS_nanosleep, &ms, 0);
            continue;
        }
        rt_lock_take(&enc[0].lock);
        encode_in_turn(&enc[0], b, ticket);
        rt_lock_drop(&enc[0].lock);
    }
    return NULL;
}

/* Without a writer thread (pthread_create failed), buffers are written by the thread that filled them. */
static void start_writer(void)
{
    /* libc rewritten (or about to be): a new thread starts in libc's start_thread with every signal blocked, */
    /* where a probe's first record cannot fault into the runtime; the threads that fill buffers write them */
    if (rw_planned()) { f.writer_running = 0; return; }
    int saved = rt_self.internal;
    rt_self.internal = RT_PRIVATE_HEAP;
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 256 * 1024);
    f.writer_running = pthread_create(&t, &a, writer_main, NULL) == 0;
    pthread_attr_destroy(&a);
    rt_self.internal = saved;
}

static void write_header(int pid)
{
    struct mtr_header h;
    rt_memzero(&h, sizeof h);
    rt_memcpy(h.magic, MTR_MAGIC, 8);
    h.version = MTR_VERSION;
    h.header_size = sizeof h;
    h.pid = (uint64_t)pid;
    h.page_size = (uint64_t)rt.page;
    h.crc = rt_crc32c(0, &h, offsetof(struct mtr_header, crc));
    write_all(&h, sizeof h);
}

/* Never through a symbolic link, and readable by the user alone. `fresh`: a fork child's file, a name */
/* made up next to the trace, must be new (O_EXCL): a leftover of an earlier process with this pid is   */
/* unlinked first (in a sticky directory only its owner can), anything planted there is never written. */
static int open_out(const char *path, int pid, int fresh)
{
    int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (fresh ? O_EXCL : O_TRUNC);
    int fd = (int)mt_sys4(SYS_openat, AT_FDCWD, path, flags, 0600);
    if (fd == -EEXIST && mt_sys1(SYS_unlink, path) == 0) fd = (int)mt_sys4(SYS_openat, AT_FDCWD, path, flags, 0600);
    if (fd < 0) return 0;
    /* Out of the program's way, and found again if the program closes it or takes its number (rt_fd.c). */
    rt_fd_adopt(fd, path);
    f.path = path;
    f.broken = 0;
    f.chunks = f.records = f.dropped = 0;
    uint64_t old = rt_block_signals(); /* a size limit's SIGXFSZ is taken back by write_failed */
    write_header(pid);
    rt_restore_signals(old);
    return 1;
}

/* Codec 7's zstd parameters, kept by the context from frame to frame (ZSTD_compress2). A static context */
/* starts with every parameter zero, the content size flag too, which the reader needs: reset them first. */
static int fused_params(ZSTD_CCtx *cctx)
{
    return cctx && !ZSTD_isError(ZSTD_CCtx_reset(cctx, ZSTD_reset_parameters)) &&
           !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1)) &&
           !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, ZLEVEL_FUSED)) &&
           !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_literalCompressionMode, FUSED_HUFFMAN ? ZSTD_ps_enable : ZSTD_ps_auto));
}

int rt_file_open(const char *path, int pid, int codec)
{
    f.codec = codec;
    if (codec < 0 || codec > 7) codec = f.codec = 7;
    rt_crc_init();
    for (int i = 0; i < 2; i++) {
        struct encoder *x = &enc[i];
        x->work_size = ZSTD_estimateCCtxSize(codec >= 3 ? ZLEVEL_PACKED : ZLEVEL);
        x->work = rt_map(x->work_size);
        /* the worst case: 20 bytes per 16-byte slot (codecs 3-5), 21 (6), 22 and a tag's margin (7) */
        size_t scratch = codec == 7 ? 2 * rt.buf_size + 65536 : rt.buf_size + rt.buf_size / 2 + 16;
        x->scratch = rt_map(scratch);
        x->packed_cap = 2 * ZSTD_compressBound(scratch) + 64 * (RT_MAX_CUTS + 2); /* a buffer and a tail: 2 buffers' slots */
        x->packed = rt_map(x->packed_cap);
        x->table = rt_map(entry_words(codec < 3 ? 3 : codec) * sizeof(uint64_t) << table_bits(codec));
        x->touched = rt_map(sizeof(uint32_t) << table_bits(codec));
        x->cctx = x->work ? ZSTD_initStaticCCtx(x->work, x->work_size) : NULL;
        if (codec == 7) {
            size_t room = rt.buf_size / 16 + 4096;
            x->streams = rt_map(2 * fused_room_ct(room) + fused_room_v(room));
            x->fz.table = x->table;
            x->fz.touched = x->touched;
            if (!x->streams || !fused_params(x->cctx)) return 0;
        }
        if (!x->cctx || !x->scratch || !x->packed || !x->table || !x->touched) return 0;
    }
    if (!open_out(path, pid, 0)) return 0;
    uint64_t old = rt_block_signals();
    start_writer();
    rt_restore_signals(old);
    return 1;
}

/* ---- the end -------------------------------------------------------------------------------------- */

void rt_finish(int how, uint64_t value, uint64_t ip, uint64_t addr, const char *path)
{
    if (rt.state != RT_RUNNING) return;
    size_t n = path ? rt_strlen(path) : 0;
    if (n > 1024) n = 1024;
    struct {
        struct mt_exit e;
        char path[1024 + 8];
    } r;
    rt_memzero(&r, sizeof r);
    r.e.h.type = MT_EXIT;
    r.e.h.flags = (uint8_t)how;
    r.e.h.tid = (uint32_t)rt_tid();
    r.e.value = value;
    r.e.ip = ip;
    r.e.addr = addr;
    r.e.path_len = (uint32_t)n;
    if (n) rt_memcpy(r.path, path, n);
    size_t len = (sizeof r.e + n + 7) & ~(size_t)7;
    r.e.h.size = (uint16_t)len;
    if (rt.to_file) { /* what the writer cost the program in waiting, before the exit record (its thread's last) */
        RT_REC(MT_WRITER, struct mt_writer, w);
        w.wait_ns = __atomic_load_n(&f.wait_ns, __ATOMIC_RELAXED);
        w.waits = __atomic_load_n(&f.waits, __ATOMIC_RELAXED);
        w.buffers = __atomic_load_n(&f.buffers, __ATOMIC_RELAXED);
        rt_emit(&w, sizeof w);
    }
    rw_trap_report(); /* rewrite mode's int3 fallback: its traps and their accesses */
    rt_emit(&r, len);
    /* One thread finishes (two threads may crash at once, or one exits while another crashes). */
    int running = RT_RUNNING;
    if (!__atomic_compare_exchange_n(&rt.state, &running, rt.to_file ? RT_FINISHING : RT_FINISHED, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_RELAXED) || !rt.to_file)
        return;
    rt.finisher = rt_tid();
    uint64_t old = rt_block_signals();
    /* Threads in the middle of handing over a buffer finish doing so (a thread stopped there for good */
    /* costs one second, then its buffer is written as it stands).                                     */
    for (int i = 0; i < 1000 && __atomic_load_n(&rt.swapping, __ATOMIC_SEQ_CST) != 0; i++) {
        struct timespec ms = {0, 1000 * 1000};
        mt_sys2(SYS_nanosleep, &ms, 0);
    }
    /* No ticket is handed out from now on (take_ticket sees the state under the queue lock); chunks being */
    /* encoded reach the file first (a thread stopped for good in the middle costs one second).          */
    rt_lock_take(&f.queue_lock);
    rt_lock_drop(&f.queue_lock);
    for (int i = 0; i < 1000 && __atomic_load_n(&f.appended, __ATOMIC_ACQUIRE) != f.next_ticket; i++) {
        struct timespec ms = {0, 1000 * 1000};
        mt_sys2(SYS_nanosleep, &ms, 0);
    }
    int saved = rt_self.internal;
    rt_self.internal = 1;
    rt_lock_take(&f.file_lock);
    for (struct rt_buf *b; (b = dequeue());) write_queued(b);
    for (int i = 0; i < RT_MAX_THREADS; i++) {
        struct rt_thread_slot *t = &rt.threads[i];
        if (!t->tid || !t->buf) continue;
        struct rt_buf *b = t->buf;
        char *upto = __atomic_load_n(t->cursor, __ATOMIC_ACQUIRE);
        if (upto < b->base || upto > b->end) continue; /* mid-swap: nothing consistent to write */
        /* The live buffer finishes its thread's pending chunk and is written whole, as a last buffer. */
        b->used = upto;
        b->events_only = !rt.recording;
        b->last = 1;
        plan(b);
        encode_buffer(&enc[0], b, 0);
        append(&enc[0], b->tid);
        b->last = 0;
        b->from = upto;
    }
    for (int i = 0; i < RT_MAX_THREADS; i++) { /* threads whose live buffer could not be read */
        struct rt_buf *p = streams[i].pending;
        if (p) {
            enc[0].npieces = 0;
            enc[0].packed_used = 0;
            encode_piece(&enc[0], p->tail, p->used, 0, 0, p->events_only, 1);
            append(&enc[0], p->tid);
            release(p);
        }
        streams[i].tid = 0;
        streams[i].pending = NULL;
    }
    int fd = rt_fd_get();
    f.end_offset = fd < 0 ? -1 : mt_sys3(SYS_lseek, fd, 0, 1 /* SEEK_CUR */);
    struct mtr_end_record e = {MTR_END_MAGIC, 0, f.chunks, f.records, f.dropped};
    e.crc = rt_crc32c(0, &e.chunks, sizeof e - offsetof(struct mtr_end_record, chunks));
    write_all(&e, sizeof e);
#ifdef RT_PROFILE
    {
        char m[200];
        size_t at = 0;
        const char *names[] = {"memtrace profile: plan ", " ms, pack ", " ms, zstd ", " ms, write ", " ms, packed MB "};
        for (int i = 0; i < 5; i++) {
            for (const char *c = names[i]; *c; c++) m[at++] = *c;
            uint64_t v = prof_ns[i] / 1000000, d = 1;
            while (v / d >= 10) d *= 10;
            for (; d; d /= 10) m[at++] = (char)('0' + v / d % 10);
        }
        for (const char *c = " ms\n"; *c; c++) m[at++] = *c;
        mt_sys3(SYS_write, 2, m, at);
    }
#endif
    rt.state = RT_FINISHED;
    rt_lock_drop(&f.file_lock);
    rt_self.internal = saved;
    rt_restore_signals(old);
}

void rt_count_dropped(uint64_t n) { __atomic_add_fetch(&f.dropped, n, __ATOMIC_RELAXED); }

void rt_unfinish(void)
{
    if (rt.state != RT_FINISHED) return;
    int fd = rt.to_file && f.end_offset > 0 ? rt_fd_get() : -1;
    if (fd >= 0) {
        mt_sys2(SYS_ftruncate, fd, f.end_offset);
        mt_sys3(SYS_lseek, fd, f.end_offset, 0 /* SEEK_SET */);
    }
    rt.state = RT_RUNNING;
}

/* ---- fork ----------------------------------------------------------------------------------------- */

void rt_file_fork_prepare(void)
{
    if (!rt.to_file) return;
    rt_lock_take(&f.file_lock);
    rt_lock_take(&f.queue_lock);
}

void rt_file_fork_parent(void)
{
    if (!rt.to_file) return;
    rt_lock_drop(&f.queue_lock);
    rt_lock_drop(&f.file_lock);
}

/* The child's copies of queued buffers hold the parent's slots: they go back to the pool. */
void rt_file_fork_child(const char *path, int pid)
{
    if (!rt.to_file) return;
    f.queue_lock.owner = 0;
    f.file_lock.owner = 0;
    for (struct rt_buf *b; (b = dequeue());) rt_buf_put(b);
    rt_fd_drop();
    f.writer_running = 0;
    if (!open_out(path, pid, 1)) {
        rt.to_file = 0;
        return;
    }
    f.next_ticket = f.appended = 0;
    f.wait_ns = f.waits = f.buffers = 0; /* the child's own waits */
    for (int i = 0; i < RT_MAX_THREADS; i++) { /* pending tails: the parent's slots */
        if (streams[i].pending) rt_buf_put(streams[i].pending);
        streams[i].tid = 0;
        streams[i].pending = NULL;
    }
    for (int i = 0; i < 2; i++) {
        enc[i].lock.owner = 0;
        enc[i].cctx = ZSTD_initStaticCCtx(enc[i].work, enc[i].work_size);
        if (f.codec == 7) fused_params(enc[i].cctx);
    }
    start_writer();
}
