/*
 * rt_period.h: codec 8, the period encoder (rt_period.c): one pass from a thread's 16-byte slots to three byte
 * streams that one zstd frame then compresses (docs/trace-format.md, "Codec 8"). Each record is predicted from
 * the slot k back in the chunk (its site, and its address plus that slot's difference), so a loop of k sites
 * hits without a table; the others are tokens relative to a recent slot of their site. Pure: no runtime state,
 * so a bench harness can link it alone.
 */
#ifndef RT_PERIOD_H
#define RT_PERIOD_H
#include <stddef.h>
#include <stdint.h>

#include "rt_fused.h" /* fused_entry: the far tokens' table is indexed as codec 7's */

#define PERIOD_W 64 /* the window: a token names its site by a slot at most this far back */

/* The token byte: kind in bits 0-1, the granule in bits 2-3, the value's length class in bits 4-5. */
enum { PERIOD_P = 0, PERIOD_J = 1, PERIOD_F = 2, PERIOD_TAG = 3 };

/* The encoder's state between its runs of slots of one chunk (a buffer's tail, the next head). */
struct period {
    uint64_t *table;            /* far tokens: the last address of a site's entry, 1 << FUSED_BITS words */
    uint32_t *touched;          /* the entries this chunk set, 1 << FUSED_BITS */
    size_t ntouched;
    uint64_t *dd;               /* per slot of a run: the difference the predictor uses (room: period_room) */
    uint64_t hist[2 * PERIOD_W];/* the chunk's last PERIOD_W slots before this run (zeros before its start) */
    uint64_t hist_dd[PERIOD_W];
    uint8_t *c, *t, *v;
    uint8_t *c0, *t0, *v0;
    uint64_t k, run;
    uint64_t records, dropped;
    size_t slots;               /* tag and event slots of the chunk */
};

/* Bytes each stream may need for n slots (c and t one per slot and a final run; v 24 per slot). */
static inline size_t period_room_ct(size_t slots) { return slots + 16; }
static inline size_t period_room_v(size_t slots) { return 24 * slots + 16; }

void period_begin(struct period *x, uint8_t *c, uint8_t *t, uint8_t *v);
/* Slots [in, end) of the chunk (events_only: access records are dropped, counted); dd has room for them. */
void period_pack(struct period *x, const uint64_t *in, const uint64_t *end, int events_only);
/* Ends the chunk: the payload before zstd (header, c, t, v) into dst; returns its length. */
size_t period_end(struct period *x, uint8_t *dst);

#endif
