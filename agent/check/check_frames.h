/*
 * check_frames.h: the table of an executable's stack variables and source lines that memtrace reads from its
 * DWARF at launch (org.memtrace.symbols.DwarfLocals) and hands to `memtrace run --check` as a file named by
 * MEMTRACE_CHECK_FRAMES, and the frame-pointer walk that finds the variable a range on the stack belongs to
 * (docs/check.md, "Stack variables"). Shared, as static functions, by fault mode's agent (check_locals.c) and
 * rewrite mode's check runtime (check_stackvars.c), which differ only in how they open the file, read the
 * program's frame records and report. Layout, little-endian, addresses link-time (the executable's load bias
 * is added by the reader):
 *   "MTLOCAL1", u32 functions, variables, rows, files, string bytes
 *   functions {u64 low, u64 high, u32 name, u32 first variable, u32 variables, u32 frame}  sorted by low
 *   variables {i64 offset from the frame's CFA (%rbp + 16), u64 size, u32 name, u32 declaration line}
 *   rows      {u64 start, i32 file (-1: a sequence's end), u32 line}                  the line table, sorted
 *   files     {u32 name};  then the strings
 *   and, from the next multiple of 8, the inlined calls' table (check/check_inline.h), when the executable has any
 * A function's frame is 0 when it keeps a frame pointer (its CFA is %rbp + 16); k + 1 for an optimised one
 * without, whose every call has its CFA at %rsp + k (org.memtrace.rewrite.RspFrames): its frame is found only
 * from a call's return address (frames_rsp_caller), and it ends a frame-pointer walk.
 *
 * What it gets wrong: a range that starts below a frame's lowest variable (an alloca, a VLA, outgoing
 * arguments) is not checked; frames without a frame pointer (-O1 and up) end the walk, as does any function
 * the table lacks (a library's); a frame's variables are all taken as live whatever their scope.
 */
#ifndef MEMTRACE_CHECK_FRAMES_H
#define MEMTRACE_CHECK_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "check.h"

int mc_snprintf(char *d, size_t n, const char *fmt, ...);

struct lfn { uint64_t low, high; uint32_t name, first, count, frame; };
struct lvar { int64_t off; uint64_t size; uint32_t name, line; };
struct lrow { uint64_t start; int32_t file; uint32_t line; };

struct mc_frames {
    const struct lfn *fn;
    const struct lvar *var;
    const struct lrow *row;
    const uint32_t *file;
    const char *str;
    uint32_t nfn, nvar, nrow, nfile, nstr;
    const unsigned char *tail; /* the inlined calls' table, or NULL */
    size_t ntail;
    uintptr_t bias;
    int ready;
};

static inline int frames_cmp8(const unsigned char *a, const char *b)
{
    for (int i = 0; i < 8; i++) if (a[i] != (unsigned char)b[i]) return 1;
    return 0;
}

/* The table mapped at f (len bytes) into t, every count checked against len; 0 when it does not add up (then */
/* t stays not ready: the run is checked without it). The caller sets t->bias.                              */
static int frames_parse(struct mc_frames *t, const unsigned char *f, size_t len)
{
    if (len < 28 || frames_cmp8(f, "MTLOCAL1")) return 0;
    uint32_t h[5];
    for (int i = 0; i < 5; i++) h[i] = (uint32_t)f[8 + 4 * i] | (uint32_t)f[9 + 4 * i] << 8 | (uint32_t)f[10 + 4 * i] << 16 | (uint32_t)f[11 + 4 * i] << 24;
    uint64_t need = 28 + (uint64_t)h[0] * sizeof(struct lfn) + (uint64_t)h[1] * sizeof(struct lvar) +
                    (uint64_t)h[2] * sizeof(struct lrow) + (uint64_t)h[3] * 4;
    uint64_t end = need + h[4], tail = (end + 7) & ~(uint64_t)7;
    if (end > (uint64_t)len || (h[4] && f[end - 1] != 0)) return 0;
    const unsigned char *at = f + 28;
    const struct lfn *fn = (const struct lfn *)at; at += (size_t)h[0] * sizeof(struct lfn);
    const struct lvar *var = (const struct lvar *)at; at += (size_t)h[1] * sizeof(struct lvar);
    const struct lrow *row = (const struct lrow *)at; at += (size_t)h[2] * sizeof(struct lrow);
    const uint32_t *file = (const uint32_t *)at; at += (size_t)h[3] * 4;
    for (uint32_t i = 0; i < h[0]; i++)
        if (fn[i].first > h[1] || fn[i].count > h[1] - fn[i].first) return 0;
    for (uint32_t i = 0; i < h[2]; i++)
        if (row[i].file >= (int32_t)h[3]) return 0;
    t->fn = fn; t->var = var; t->row = row; t->file = file; t->str = (const char *)at;
    t->nfn = h[0]; t->nvar = h[1]; t->nrow = h[2]; t->nfile = h[3]; t->nstr = h[4];
    if (tail < (uint64_t)len) { t->tail = f + tail; t->ntail = (size_t)((uint64_t)len - tail); }
    t->ready = 1;
    return 1;
}

static inline const char *frames_str(const struct mc_frames *t, uint32_t at) { return at < t->nstr ? t->str + at : ""; }

/* The listed function whose code holds pc, or NULL. */
static const struct lfn *frames_fn_of(const struct mc_frames *t, uintptr_t pc)
{
    if (!t->ready || pc < t->bias) return NULL;
    uint64_t a = pc - t->bias;
    uint32_t lo = 0, hi = t->nfn;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->fn[mid].low <= a) lo = mid + 1; else hi = mid;
    }
    if (!lo || a >= t->fn[lo - 1].high) return NULL;
    return &t->fn[lo - 1];
}

/* "file:line" of an address of the executable into out, or NULL (check_line_of, the agent's and a rewrite run's). */
static const char *frames_line_of(const struct mc_frames *t, uintptr_t pc, char *out, size_t size)
{
    if (!t->ready || !t->nrow || pc < t->bias) return NULL;
    uint64_t a = pc - t->bias;
    uint32_t lo = 0, hi = t->nrow;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->row[mid].start <= a) lo = mid + 1; else hi = mid;
    }
    if (!lo || lo == t->nrow || t->row[lo - 1].file < 0) return NULL; /* before the first, past the last, in a gap */
    mc_snprintf(out, size, "%s:%u", frames_str(t, t->file[t->row[lo - 1].file]), t->row[lo - 1].line);
    return out;
}

/* The variable of frame f (CFA cfa) that [p, p+n) belongs to, and whether the range fits in it. Returns */
/* NULL when p is in no variable and below the frame's lowest one (not an object the table knows).       */
static const struct lvar *frames_object_of(const struct mc_frames *t, const struct lfn *f, uintptr_t cfa, uintptr_t p,
                                           size_t n, int *fits)
{
    const struct lvar *in = NULL, *below = NULL, *above = NULL;
    uintptr_t below_end = 0, above_beg = 0;
    *fits = 0;
    for (uint32_t i = f->first; i < f->first + f->count; i++) {
        const struct lvar *v = &t->var[i];
        uintptr_t beg = cfa + (intptr_t)v->off, end = beg + v->size;
        if (p >= beg && p < end) {
            if (n <= end - p) { *fits = 1; return v; }
            if (!in || v->size > in->size) in = v;
        } else if (end <= p && (!below || end > below_end)) {
            below = v;
            below_end = end;
        } else if (beg > p && (!above || beg < above_beg)) {
            above = v;
            above_beg = beg;
        }
    }
    if (in) return in;
    if (!below) return NULL; /* an alloca, a VLA or outgoing arguments: no extent known */
    /* in the padding between two: a range that runs into the one above came from a pointer before it (an */
    /* underflow, as ASan's redzone there says); one that does not belongs to the nearer                  */
    if (above && (n > above_beg - p || above_beg - p < p - below_end)) return above;
    return below;
}

/* The extent of variable v of function f's frame (CFA cfa) into x, named as the reports name it. */
static void frames_name(const struct mc_frames *t, const struct lfn *f, const struct lvar *v, uintptr_t cfa, struct mc_extent *x)
{
    x->beg = cfa + (intptr_t)v->off;
    x->size = v->size;
    x->region = "stack";
    const char *fn = frames_str(t, f->name);
    mc_snprintf(x->name, sizeof x->name, "<stack:%s@%s>", frames_str(t, v->name), mc_spell(fn));
    if (v->line) mc_snprintf(x->desc, sizeof x->desc, "a variable of %lu bytes, declared at line %u of %s",
                             (unsigned long)v->size, v->line, mc_spell(fn));
    else mc_snprintf(x->desc, sizeof x->desc, "a variable of %lu bytes of %s", (unsigned long)v->size, mc_spell(fn));
}
/* The frames from the one whose %rbp is rbp (its code at pc, a return address) upwards, none below low: when */
/* [p, p+n) leaves the variable of its frame it belongs to, that variable into x and 1. read16 reads a frame  */
/* record (saved %rbp, return address), 0 when it could.                                                     */
static int frames_walk(const struct mc_frames *t, uintptr_t p, size_t n, uintptr_t pc, uintptr_t rbp, uintptr_t low,
                       int (*read16)(uint64_t w[2], uintptr_t at), struct mc_extent *x)
{
    uintptr_t at = pc;
    for (int depth = 0; rbp && depth < 256; depth++) {
        const struct lfn *f = frames_fn_of(t, at - 1);
        if (!f || f->frame || (rbp & 7) || rbp < low) return 0;
        uintptr_t cfa = rbp + 16;
        if (p < cfa) {
            int fits;
            const struct lvar *v = frames_object_of(t, f, cfa, p, n, &fits);
            if (!v || fits) return 0;
            frames_name(t, f, v, cfa, x);
            return 1;
        }
        uint64_t w[2];
        if (read16(w, rbp) || w[0] <= rbp || w[0] - rbp > (1UL << 20)) return 0;
        low = cfa;
        at = w[1];
        rbp = w[0];
    }
    return 0;
}

/* The %rbp of the program's frame that called the function whose return address is pc, found up the caller's */
/* own frame-pointer chain from fp (built with frame pointers), or 0.                                          */
static uintptr_t frames_caller_rbp(uintptr_t fp, uintptr_t pc, int (*read16)(uint64_t w[2], uintptr_t at))
{
    for (int i = 0; i < 16; i++) {
        uint64_t w[2];
        if ((fp & 7) || read16(w, fp)) return 0;
        if (w[1] == pc) return w[0];
        if (w[0] <= fp || w[0] - fp > (1UL << 20)) return 0;
        fp = w[0];
    }
    return 0;
}

/* An optimised caller (frame k + 1) of the function whose return address is pc, found up the runtime's own  */
/* chain from fp: when [p, p+n) starts inside one of its variables and runs past that variable's end, the    */
/* variable into x and 1. Its CFA is the return address's slot + 8 + k. A range that starts in no variable  */
/* is not judged: optimised code keeps spills and temporaries between its variables, which DWARF never names. */
static inline int frames_rsp_caller(const struct mc_frames *t, uintptr_t p, size_t n, uintptr_t pc, uintptr_t fp,
                                    int (*read16)(uint64_t w[2], uintptr_t at), struct mc_extent *x)
{
    const struct lfn *f = frames_fn_of(t, pc - 1);
    if (!f || !f->frame) return 0;
    for (int i = 0; i < 16; i++) {
        uint64_t w[2];
        if ((fp & 7) || read16(w, fp)) return 0;
        if (w[1] == pc) break;
        if (i == 15 || w[0] <= fp || w[0] - fp > (1UL << 20)) return 0;
        fp = w[0];
    }
    uintptr_t cfa = fp + 16 + (f->frame - 1);
    if (p >= cfa) return 0;
    const struct lvar *in = NULL;
    for (uint32_t i = f->first; i < f->first + f->count; i++) {
        const struct lvar *v = &t->var[i];
        uintptr_t beg = cfa + (intptr_t)v->off, end = beg + v->size;
        if (p < beg || p >= end) continue;
        if (n <= end - p) return 0; /* a variable holds it (scopes sharing a slot: any one) */
        if (!in || v->size > in->size) in = v;
    }
    if (!in) return 0;
    frames_name(t, f, in, cfa, x);
    return 1;
}

#endif
