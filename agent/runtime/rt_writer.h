/*
 * rt_writer.h: what the four parts of libmemtrace-rt.so's .mtr writer share (docs/compiled-in.md, "The .mtr
 * file"); internal to them, rt.h is the runtime's interface to the writer.
 *
 *   rt_queue.c  the pool of buffers, the queue of full ones, tickets, the writer thread and its helper
 *   rt_plan.c   chunk boundaries: where a thread's slots are cut into chunks, planned as its buffers queue
 *   rt_codec.c  the codecs: a planned buffer's chunks into payloads (codecs 0-6; 7 is rt_fused.c, 8 rt_period.c), zstd
 *   rt_file.c   the file: header, chunk headers and CRCs, writes, the end record, fork
 *
 * A buffer goes: rt_file_queue (rt_queue.c) -> wr_plan (rt_plan.c) -> a ticket -> wr_encode_buffer
 * (rt_codec.c) -> wr_append (rt_file.c) -> wr_release (back to the pool once the next buffer of its thread
 * has read its tail).
 *
 * What it gets wrong: the state is one global (`wr`) and two encoders (`wr_enc`) that all four files touch
 * under the locks documented on their fields; nothing but the comments says which file owns which field.
 */
#ifndef RT_WRITER_H
#define RT_WRITER_H

#include <time.h>

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "mt_file.h"
#include "rt.h"
#include "rt_fused.h"
#include "rt_period.h"

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
#ifndef ZLEVEL_FUSED
#define ZLEVEL_FUSED (-3)
#endif
/* zstd's shortest match for codecs 7 and 9 (0: its default for the level, 5 or 6): zstd's time there is the */
/* run stream's, not the value stream's (a random v of 128 KB takes it 3 us, a near-constant c a third that  */
/* size 38 us: each row end of spmv is a sequence). 6 or 7 (RT_PROFILE, setarch -R, one run each, load 25):  */
/* chase zstd 96 -> 77 ms and 0.3 % fewer bytes, hash 42 -> 34 ms and 0.9 % more, spmv unchanged, smooth    */
/* 1.5-2.6 % more bytes. Left at 0; `-DFUSED_MINMATCH=N` sets it at build time.                               */
#ifndef FUSED_MINMATCH
#define FUSED_MINMATCH 0
#endif
#ifndef FUSED_HUFFMAN
#define FUSED_HUFFMAN 0
#endif
/* zstd's hash table (hashLog) for a chunk of codecs 7, 9 and 10 whose token stream holds a byte for half its */
/* records or more (fused_hashlog in rt_codec.c: most records are large random differences, chase's and hash's */
/* pointers): its streams are mostly literals, and level -3's table (2^12-2^13 entries, 16-32 KB, the L1      */
/* cache's size) costs zstd time at each look for a match that then rarely comes; 2^10 entries take 4 KB.     */
/* bench/runtime/mtr_stages.c (thread CPU, zstd ns a record, bytes a record after zstd; min of 3, load 24):    */
/* chase 3.10 -> 2.50 ns, 3.0531 -> 3.0549 B; hash 2.89 -> 2.10, 2.9305 -> 2.9682 (+1.3 %). Every other chunk  */
/* keeps zstd's default; for all chunks alike 2^10 cost smooth 5.5 % and the zstd program's trace 4 % more     */
/* bytes, and python3's start-up chunk (2.6 bytes a record before zstd, compressible) 8 %. 0: never.          */
#ifndef FUSED_HASHLOG_DENSE
#define FUSED_HASHLOG_DENSE 10
#endif

/* The writer's state: the file (rt_file.c), the pool and the queue (rt_queue.c), counted chunks and waits. */
struct rt_writer {
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
    uint64_t own_ns, own;       /* no writer thread: buffers a program thread encoded and wrote itself (MT_WRITER) */
    int broken;                 /* zstd or a write failed: nothing more is written */
    const char *path;           /* the trace's name, for the message of a failed write */
};
extern struct rt_writer wr;  /* rt_file.c */

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
    struct period pz;           /* codec 8: its table is `table`, its list `touched`, its streams `streams` */
    /* The chunks of the last encoded buffer, in order: payload, sizes and what each counted. */
    int npieces;
    size_t packed_used;         /* bytes of `packed` the pieces' frames take */
    struct piece {
        const char *payload;
        size_t stored, raw;
        uint64_t records, dropped;
    } piece[RT_MAX_CUTS + 2];
};
extern struct encoder wr_enc[2]; /* rt_codec.c */

/* `make CFLAGS="-O2 -g -DRT_PROFILE"`: CPU time of each stage (thread CPU clock), printed at the end. */
#ifdef RT_PROFILE
extern uint64_t prof_ns[5]; /* plan, pack, zstd, write (ns); packed bytes */
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

/* A tag and the event slots after it, in u64 words: fewer if the buffer ends first (every codec copies them as they are). */
static inline size_t tag_words(const uint64_t *in, const uint64_t *end)
{
    size_t n = 2 + ((((in[1] >> 8) & 0xffff) + 15) / 16) * 2;
    return in + n > end ? (size_t)(end - in) : n;
}

/* rt_queue.c */
void wr_release(struct rt_buf *b);            /* one reader of b's slots is done: back to the pool after the last */
struct rt_buf *wr_dequeue(void);              /* the oldest queued buffer, NULL when none */
void wr_write_queued(struct rt_buf *b);       /* encoded, appended and let go by the caller (no ticket) */
void wr_start_writer(void);                   /* the writer thread, unless libc is rewritten */

/* rt_plan.c */
void wr_plan(struct rt_buf *b);               /* b's chunk boundaries, in b's own thread as it queues it */
struct rt_buf *wr_plan_forget(int i);         /* stream i given up (final flush, fork child): its pending buffer */

/* rt_codec.c */
int wr_codec_init(int codec);                 /* both encoders' memory and zstd contexts; 0 on failure */
void wr_codec_fork_child(void);               /* the encoders' locks and contexts, fresh in a fork child */
void wr_encode_buffer(struct encoder *x, struct rt_buf *b, int in_place);
void wr_encode_piece(struct encoder *x, const char *s1, const char *e1, const char *s2, const char *e2, int events_only,
                     int in_place);

/* rt_file.c */
void wr_append(struct encoder *x, uint32_t tid); /* x's pieces as chunks at the end of the file */

#endif
