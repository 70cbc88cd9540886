/*
 * rt_debug.c: what libmemtrace-rt.so promises of its buffers and chunks (rt.h, include/mt_file.h),
 * asserted in an MT_DEBUG build (`make CFLAGS="-O1 -g -DMT_DEBUG"`; common/mt_common.h, MT_ASSERT). The
 * product's build compiles this file to nothing but empty checks, which rt_queue.c and rt_file.c call only
 * under MT_DEBUG_ONLY.
 *
 *   rt_check_buf    a buffer handed to the writer, once planned: base <= from <= used <= end, whole
 *                   16-byte slots, at most RT_MAX_CUTS cuts, each in the buffer's slots [from, used] or in
 *                   its previous buffer's tail, in order within each, the carried tail in [from, used],
 *                   one or two holds
 *   rt_check_chunk  a chunk header about to be written: its magic, codec, lengths (whole slots, a stored
 *                   payload) and both CRC32Cs recomputed
 *
 * memtrace_debug_break("buffer"), exported by the MT_DEBUG build only, moves the calling thread's
 * buffer's `from` past its cursor, so that the buffer's next hand-over to the writer (a full buffer, a
 * stop, the exit) breaks the first invariant (launch.DebugBuildTest); memtrace_debug_break("emit") makes the
 * thread's next event fault inside rt_emit_seq's window (a read of address 8), which the runtime must take
 * as its own fault, never the program's (rt_signal.c, in_emit_window; DebugBuildTest).
 *
 * How its output reads: nothing while the invariants hold; else the one line of mt_invariant_broken and
 * SIGABRT (status 134).
 *
 * What it gets wrong: the checks see each buffer once, when it is queued, and each chunk's header, not
 * its payload's decoding; the slots are walked only for their length.
 */
#include <stddef.h>

#include "mt_file.h"
#include "rt.h"

#ifdef MT_DEBUG
static int in_span(const char *c, const char *s, const char *e) { return c >= s && c <= e; }
#endif

void rt_check_buf(const struct rt_buf *b)
{
#ifdef MT_DEBUG
    const char *what = "a queued buffer's bounds, cuts and tail are in order";
    MT_ASSERT(b->base <= b->from && b->from <= b->used && b->used <= b->end, what);
    MT_ASSERT((b->used - b->base) % 16 == 0 && (b->from - b->base) % 16 == 0, what);
    MT_ASSERT(b->ncuts >= 0 && b->ncuts <= RT_MAX_CUTS, what);
    MT_ASSERT(b->holds == 1 || b->holds == 2, what);
    MT_ASSERT(in_span(b->tail, b->from, b->used), what);
    const struct rt_buf *p = b->prev;
    const char *last = NULL;
    int in_prev = 1;
    for (int i = 0; i < b->ncuts; i++) {
        const char *c = b->cuts[i];
        int prev_cut = p && !b->prev_alone && in_span(c, p->tail, p->used);
        MT_ASSERT(prev_cut || in_span(c, b->from, b->used), what);
        MT_ASSERT(!prev_cut || in_prev, what); /* the previous buffer's cuts come first */
        if (!prev_cut && in_prev) { in_prev = 0; last = NULL; }
        MT_ASSERT(!last || last < c, what);
        last = c;
    }
#else
    (void)b;
#endif
}

void rt_check_chunk(const struct mtr_chunk_header *h, const void *payload, int codec)
{
#ifdef MT_DEBUG
    const char *what = "a chunk header matches its payload";
    MT_ASSERT(h->magic == MTR_CHUNK_MAGIC && h->codec == (uint32_t)codec && h->reserved == 0, what);
    MT_ASSERT(h->stored_len > 0 && h->raw_len > 0 && h->raw_len % 16 == 0, what);
    MT_ASSERT(h->payload_crc == rt_crc32c(0, payload, h->stored_len), what);
    MT_ASSERT(h->header_crc == rt_crc32c(0, h, offsetof(struct mtr_chunk_header, header_crc)), what);
#else
    (void)h; (void)payload; (void)codec;
#endif
}

#ifdef MT_DEBUG
RT_EXPORT void memtrace_debug_break(const char *what)
{
    if (rt_strncmp(what, "emit", 5) == 0) rt_debug_emit_fault = 1;
    if (rt_strncmp(what, "buffer", 7) != 0 || !rt_self.buf) return;
    rt_self.buf->from = rt_self.buf->end;
}
#endif
