/*
 * check_inline.h: the inlined calls at a code address, for the check reports' frames (docs/check.md, "Inlined
 * frames"), from the table memtrace built from a module's DWARF (org.memtrace.symbols.DwarfInlines.encode):
 * `memtrace run --check` hands it to the agent behind the stack-variable table (MEMTRACE_CHECK_FRAMES,
 * check_locals.c), `memtrace cc --check` puts it in the linked program as the section .memtrace_inlines
 * (check_inline.c reads it back from the module's file). Layout, little-endian, link-time addresses:
 *   "MTINLIN1", u32 segments, calls, string bytes
 *   segments {u64 start, i32 owning call (-1: none), u32 0}                 sorted by start
 *   calls    {u32 name, u32 call file (0xffffffff: unknown), u32 call line, i32 enclosing call (-1 or earlier)}
 *   then the NUL-terminated strings
 * A lookup is a binary search for the segment, then the walk up the enclosing calls: innermost first, as
 * `addr2line -i` gives them. Static inline, no libc, no allocation: both the agent and the runtime use it.
 *
 * What it gets wrong: nothing of its own; a table that does not add up (a count past the size, a name past the
 * strings, an enclosing call that is not an earlier one) is refused whole (no inlined frames).
 */
#ifndef MEMTRACE_CHECK_INLINE_H
#define MEMTRACE_CHECK_INLINE_H

#include <stddef.h>
#include <stdint.h>

struct mc_inl_seg { uint64_t start; int32_t owner; uint32_t pad; };
struct mc_inl_call { uint32_t name, file, line; int32_t parent; };
struct mc_inlines {
    const struct mc_inl_seg *seg;
    const struct mc_inl_call *call;
    const char *str;
    uint32_t nseg, ncall, nstr;
};

/* Parses the n bytes at p into t; 0 when they are a whole, consistent table, -1 otherwise (t then unusable). */
static inline int mc_inlines_parse(const unsigned char *p, size_t n, struct mc_inlines *t)
{
    static const char magic[8] = {'M', 'T', 'I', 'N', 'L', 'I', 'N', '1'};
    if (!p || n < 20) return -1;
    for (int i = 0; i < 8; i++)
        if (p[i] != (unsigned char)magic[i]) return -1;
    uint32_t h[3];
    for (int i = 0; i < 3; i++)
        h[i] = (uint32_t)p[8 + 4 * i] | (uint32_t)p[9 + 4 * i] << 8 | (uint32_t)p[10 + 4 * i] << 16 | (uint32_t)p[11 + 4 * i] << 24;
    uint64_t need = 20 + (uint64_t)h[0] * sizeof(struct mc_inl_seg) + (uint64_t)h[1] * sizeof(struct mc_inl_call) + h[2];
    if (need != n || (h[2] && p[n - 1] != 0) || ((uintptr_t)p & 3)) return -1;
    t->seg = (const struct mc_inl_seg *)(const void *)(p + 20);
    t->call = (const struct mc_inl_call *)(const void *)(p + 20 + (size_t)h[0] * sizeof(struct mc_inl_seg));
    t->str = (const char *)(p + 20 + (size_t)h[0] * sizeof(struct mc_inl_seg) + (size_t)h[1] * sizeof(struct mc_inl_call));
    t->nseg = h[0];
    t->ncall = h[1];
    t->nstr = h[2];
    for (uint32_t i = 0; i < t->nseg; i++)
        if (t->seg[i].owner < -1 || t->seg[i].owner >= (int32_t)t->ncall || (i && t->seg[i].start < t->seg[i - 1].start)) return -1;
    for (uint32_t i = 0; i < t->ncall; i++) {
        const struct mc_inl_call *c = &t->call[i];
        if (c->name >= t->nstr || (c->file != 0xffffffffu && c->file >= t->nstr) || c->parent < -1 || c->parent >= (int32_t)i) return -1;
    }
    return 0;
}

/* The calls inlined at link-time address a, innermost first, at most max into out; their number (0: none). */
static inline int mc_inlines_chain(const struct mc_inlines *t, uint64_t a, const struct mc_inl_call **out, int max)
{
    uint32_t lo = 0, hi = t->nseg;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->seg[mid].start <= a) lo = mid + 1; else hi = mid;
    }
    if (!lo) return 0;
    int n = 0;
    for (int32_t c = t->seg[lo - 1].owner; c >= 0 && n < max; c = t->call[c].parent) out[n++] = &t->call[c];
    return n;
}

static inline const char *mc_inlines_str(const struct mc_inlines *t, uint32_t at) { return at < t->nstr ? t->str + at : NULL; }

#endif
