/*
 * check_scan.h: what a call of scanf's family stored, walked from its format after the call, shared by the
 * compiled-in checker (check_io.c, every destination against the shadow) and run --check's fault-mode agent
 * (check_input.c, destinations on the stack or in the executable's globals against their DWARF or symbol
 * extents). For each of the first n assigned conversions, when it stored a string or characters: %s and
 * %[...] the string and its terminator, %Nc N characters (1 without a width), l (or %S %C) wide ones; %n, %*,
 * the numbers and %m's buffers (their malloc is the checked one) are skipped; a format of positional
 * arguments (%1$s) is not walked. The strings are measured by hand (a wrapped strlen would report the bytes
 * past a buffer it reads). The wide family (wscanf, fwscanf, swscanf) is walked by its format's ASCII copy
 * (its conversions are ASCII: %s a multibyte string into a char array, %ls a wide one), at most its first 1023
 * characters; a narrow %Nc there counts N bytes, exact for ASCII input, a narrow %s or %[ its string and two
 * terminators (glibc's). sscanf and swscanf, whose input is all
 * in memory, are first run aside into scratch destinations (mc_scan_before), so their ranges are checked before
 * the real call stores; the stream forms, which cannot be read twice, make their one real call into the
 * runtime's own slots, %s as glibc's %ms and the like (mc_fscan_run), and each range is checked before it is
 * copied to the program's destination; mc_scanned's walk after the call remains for what neither expresses.
 */
#ifndef CHECK_SCAN_H
#define CHECK_SCAN_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <wchar.h>

typedef void (*mc_scan_wrote)(const void *p, size_t n, const void *pc, const char *fn);

static inline size_t mc_scan_len(const char *s)
{
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

static inline size_t mc_scan_wlen(const wchar_t *s)
{
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

/* ---- the format's reader, one for the three walks below (what was stored, the call run aside, the stream's
 * call rewritten) ---- */

/* A format's ASCII copy into out (cap bytes; a wide format's characters past ASCII as '?', a narrow one's bytes
 * as they are): 1 when it all fitted, 0 when it has cap characters or more (out then holds the first cap - 1). */
static inline int mc_scan_ascii(const void *fmt, int wide, char *out, size_t cap)
{
    size_t k = 0;
    for (; wide ? ((const wchar_t *)fmt)[k] != 0 : ((const char *)fmt)[k] != 0; k++) {
        if (k + 1 >= cap) {
            out[k] = 0;
            return 0;
        }
        wchar_t c = wide ? ((const wchar_t *)fmt)[k] : (wchar_t)(unsigned char)((const char *)fmt)[k];
        out[k] = wide ? (c > 0 && c < 0x80 ? (char)c : '?') : (char)c;
    }
    out[k] = 0;
    return 1;
}

/* One conversion of a scanf format, as glibc reads it: %, the flags (* assigns nothing; ' and I are taken and
 * change no size), the width, the size modifiers, the conversion and a %[ set. */
struct mc_scan_conv {
    char c;                  /* the conversion: s [ c S C n d i ... */
    int skip;                /* %*: assigns nothing */
    int alloc;               /* %m, or GNU's %as %aS %a[ (gnu): glibc allocates the destination */
    int h, l, big;           /* how many h, l, and L q j z t */
    size_t width;            /* 0 when none (saturated, never wrapped) */
    size_t mod, conv;        /* offsets in the format: the first size modifier (after the width), the conversion */
};

/* Reads the next conversion of f from *at (an offset, moved past it): 1 with *cv, 0 at the format's end, -1
 * where the format is not walked: a positional argument (%1$s), a conversion or a %[ set cut off by the end. */
static inline int mc_scan_next(const char *f, size_t *at, int gnu, struct mc_scan_conv *cv)
{
    size_t i = *at;
    for (;;) {
        if (!f[i]) return 0;
        if (f[i++] != '%') continue;
        if (f[i] == '%') { i++; continue; }
        break;
    }
    size_t d = i;
    while (f[d] >= '0' && f[d] <= '9') d++;
    if (f[d] == '$') return -1;
    *cv = (struct mc_scan_conv){0};
    for (; f[i] == '*' || f[i] == '\'' || f[i] == 'I'; i++) cv->skip |= f[i] == '*';
    for (; f[i] >= '0' && f[i] <= '9'; i++)
        cv->width = cv->width <= (SIZE_MAX - 9) / 10 ? cv->width * 10 + (size_t)(f[i] - '0') : SIZE_MAX;
    cv->mod = i;
    for (;; i++) {
        if (f[i] == 'h') cv->h++;
        else if (f[i] == 'l') cv->l++;
        else if (f[i] == 'L' || f[i] == 'q' || f[i] == 'j' || f[i] == 'z' || f[i] == 't') cv->big++;
        else if (f[i] == 'm' || (f[i] == 'a' && gnu && (f[i + 1] == 's' || f[i + 1] == 'S' || f[i + 1] == '['))) cv->alloc = 1;
        else break;
    }
    cv->conv = i;
    cv->c = f[i++];
    if (!cv->c) return -1;
    if (cv->c == '[') {   /* a ']' first in the set is one of its characters */
        if (f[i] == '^') i++;
        if (f[i] == ']') i++;
        while (f[i] && f[i] != ']') i++;
        if (!f[i]) return -1;
        i++;
    }
    *at = i;
    return 1;
}

/* gets's line, read from f into memory of the checker's own before a byte of it is stored (issue 23: the real
 * __gets_chk stops at its size, so the program's memory past a buffer must be untouched when the overflow is
 * said): the characters up to the newline or the end of the input, the newline not kept, then a terminator.
 * l->p starts as the caller's buffer of l->cap bytes; a longer line moves to pages of map's, given back by
 * mc_line_done. Returns 0 where gets returns NULL: the input ended before a character, or a read error. A
 * line that no memory holds is cut there, the rest left unread. */
struct mc_line { char *p; size_t len, cap; int mapped; };
typedef void *(*mc_line_map)(void *old, size_t old_size, size_t size); /* size 0: unmap old */
static inline int mc_read_line(FILE *f, struct mc_line *l, mc_line_map map)
{
    int c, any = 0;
    l->len = 0;
    flockfile(f);
    while ((c = getc_unlocked(f)) != EOF) {
        any = 1;
        if (c == '\n') break;
        if (l->len + 1 >= l->cap) {
            char *q = map(NULL, 0, 2 * l->cap);
            if (!q) { ungetc(c, f); break; }
            for (size_t i = 0; i < l->len; i++) q[i] = l->p[i];
            if (l->mapped) map(l->p, l->cap, 0);
            l->p = q;
            l->cap *= 2;
            l->mapped = 1;
        }
        l->p[l->len++] = (char)c;
    }
    int failed = c == EOF && ferror(f);
    funlockfile(f);
    l->p[l->len] = 0;
    return any && !failed;
}

static inline void mc_line_done(struct mc_line *l, mc_line_map map)
{
    if (l->mapped) map(l->p, l->cap, 0);
}

/* wfam: the wide family's format, whose narrow %s and %[ store two terminators (glibc writes wcrtomb's L'\0' and
 * then its own) */
static inline void mc_scanned_as(const char *f, va_list ap, int n, const void *pc, const char *fn, mc_scan_wrote wrote,
                                 int wfam)
{
    struct mc_scan_conv cv;
    size_t at = 0;
    while (n > 0 && mc_scan_next(f, &at, 0, &cv) > 0) {
        if (cv.skip) continue;
        void *p = va_arg(ap, void *);
        char c = cv.c;
        if (c == 'n') continue;   /* not counted in the result */
        n--;
        int wide = cv.l == 1 || c == 'S' || c == 'C';
        if (cv.alloc || !p) continue;
        if (c == 's' || c == 'S' || c == '[')
            wrote(p, wide ? (mc_scan_wlen(p) + 1) * sizeof(wchar_t) : mc_scan_len(p) + 1 + (wfam != 0), pc, fn);
        else if (c == 'c' || c == 'C')
            wrote(p, (cv.width ? cv.width : 1) * (wide ? sizeof(wchar_t) : 1), pc, fn);
    }
}

static inline void mc_scanned(const char *f, va_list ap, int n, const void *pc, const char *fn, mc_scan_wrote wrote)
{
    mc_scanned_as(f, ap, n, pc, fn, wrote, 0);
}

/* the wide family's format, walked as its ASCII copy */
static inline void mc_wscanned(const wchar_t *f, va_list ap, int n, const void *pc, const char *fn, mc_scan_wrote wrote)
{
    char narrow[1024];
    mc_scan_ascii(f, 1, narrow, sizeof narrow);   /* a longer one: its first 1023 characters */
    mc_scanned_as(narrow, ap, n, pc, fn, wrote, 1);
}

/* ---- sscanf and swscanf checked before they store (issue 23): their input is all in memory, so the call is
 * first made into the runtime's own scratch destinations, one per argument and each as large as anything the
 * input can produce, and what each assigned %s %[ %c stored there (measured as mc_scanned measures) is then the
 * range checked at the program's destination, before the real call stores a byte. The result is the same as
 * the real call's: the conversion depends on the input and the format alone (a destination overlapping the
 * input, which C forbids, aside). A format of positional arguments, with %m (or GNU %as: malloc, which would
 * number the program's blocks), or of more than MC_SCAN_ARGS arguments is not run aside: its check stays
 * after the call. ---- */
#define MC_SCAN_ARGS 32

/* The pointer arguments the format takes, or -1 when it is not run aside (gnu: the plain names, where %as is a
 * malloc), 0 when none stores a string or characters (numbers only: nothing to check), and in size[i] the scratch bytes the i-th may store given an input of len characters (wide: a wide
 * input, whose character is at most MB_LEN_MAX, 16, bytes of a multibyte %s): %s %[ %c as many characters as
 * their width or the input has (a wchar_t each for %ls), with the terminator; 16 for a number (long double). */
static inline int mc_scan_args(const char *f, int gnu, size_t len, int wide, size_t *size)
{
    int args = 0, strings = 0, more;
    struct mc_scan_conv cv;
    size_t at = 0;
    while ((more = mc_scan_next(f, &at, gnu, &cv)) > 0) {
        if (cv.alloc) return -1;
        if (cv.skip) continue;
        if (args == MC_SCAN_ARGS) return -1;
        size_t n = 16;
        char c = cv.c;
        if (c == 's' || c == 'S' || c == '[' || c == 'c' || c == 'C') {
            size_t chars = cv.width && cv.width < len ? cv.width : len;
            size_t unit = cv.l == 1 || c == 'S' || c == 'C' ? sizeof(wchar_t) : wide ? 16 : 1;
            n = ((chars + 1) * unit + 15) & ~(size_t)15;
            strings++;
        }
        size[args++] = n;
    }
    if (more < 0) return -1;
    return strings ? args : 0;
}

/* the scratch destinations and, after the call aside, the bytes each assigned conversion stored (0: none) */
struct mc_scan_aside { void *at[MC_SCAN_ARGS]; size_t n[MC_SCAN_ARGS]; };

static inline void mc_scan_collect(const void *p, size_t n, const void *aside, const char *fn)
{
    struct mc_scan_aside *a = (struct mc_scan_aside *)aside;
    (void)fn;
    for (int i = 0; i < MC_SCAN_ARGS; i++)
        if (a->at[i] == p) a->n[i] = n;
}

#define MC_SCAN_AT(a) a->at[0], a->at[1], a->at[2], a->at[3], a->at[4], a->at[5], a->at[6], a->at[7], a->at[8], \
    a->at[9], a->at[10], a->at[11], a->at[12], a->at[13], a->at[14], a->at[15], a->at[16], a->at[17], a->at[18],    \
    a->at[19], a->at[20], a->at[21], a->at[22], a->at[23], a->at[24], a->at[25], a->at[26], a->at[27], a->at[28],   \
    a->at[29], a->at[30], a->at[31]

typedef int (*mc_vsscanf)(const char *, const char *, va_list);
typedef int (*mc_vswscanf)(const wchar_t *, const wchar_t *, va_list);

static inline int mc_scan_call(mc_vsscanf v, const char *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = v(s, fmt, ap);
    va_end(ap);
    return r;
}

static inline int mc_wscan_call(mc_vswscanf v, const wchar_t *s, const wchar_t *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = v(s, fmt, ap);
    va_end(ap);
    return r;
}

static inline void mc_scan_measure(const char *fmt, int r, struct mc_scan_aside *a, ...)
{
    va_list ap;
    va_start(ap, a);
    mc_scanned(fmt, ap, r, a, NULL, mc_scan_collect);
    va_end(ap);
}

static inline void mc_wscan_measure(const wchar_t *fmt, int r, struct mc_scan_aside *a, ...)
{
    va_list ap;
    va_start(ap, a);
    mc_wscanned(fmt, ap, r, a, NULL, mc_scan_collect);
    va_end(ap);
}

/* Runs v (narrow, or wv with wide s and fmt) aside on the input s, then calls check(p, n, pc, fn) for each
 * range the real call will store at the program's destinations (taken from ap, which is left as it was).
 * scratch: small bytes of the caller's, else pages of map's (mc_line_map). Returns 0 when the call was not run
 * aside (the format, no memory): the caller checks after the call. errno is kept as it was. */
static inline int mc_scan_before(mc_vsscanf v, mc_vswscanf wv, const void *s, const void *fmt, int gnu, va_list ap,
                                 char *small, size_t small_size, mc_line_map map, const void *pc, const char *fn,
                                 mc_scan_wrote check)
{
    char narrow[1024];
    const char *f = fmt;
    if (wv) {   /* the wide format's conversions, by its ASCII copy as mc_wscanned walks it */
        if (!mc_scan_ascii(fmt, 1, narrow, sizeof narrow)) return 0;
        f = narrow;
    }
    size_t len = wv ? mc_scan_wlen(s) : mc_scan_len(s), size[MC_SCAN_ARGS], total = 0;
    if (len > (SIZE_MAX >> 6) / MC_SCAN_ARGS) return 0;
    int args = mc_scan_args(f, gnu, len, wv != NULL, size);
    if (args <= 0) return 0;
    for (int i = 0; i < args; i++) total += size[i];
    char *mem = small;
    if (total > small_size && !(mem = map(NULL, 0, total))) return 0;
    struct mc_scan_aside a;
    for (int i = 0; i < MC_SCAN_ARGS; i++) a.at[i] = NULL, a.n[i] = 0;
    for (size_t i = 0, at = 0; i < (size_t)args; at += size[i], i++) a.at[i] = mem + at;
    int saved = errno;
    struct mc_scan_aside *pa = &a;
    int r = wv ? mc_wscan_call(wv, s, fmt, MC_SCAN_AT(pa)) : mc_scan_call(v, s, fmt, MC_SCAN_AT(pa));
    if (r > 0) {
        if (wv) mc_wscan_measure(fmt, r, pa, MC_SCAN_AT(pa));
        else mc_scan_measure(fmt, r, pa, MC_SCAN_AT(pa));
    }
    errno = saved;
    if (mem != small) map(mem, total, 0);
    va_list dest;
    va_copy(dest, ap);
    for (int i = 0; i < args; i++) {
        void *p = va_arg(dest, void *);
        if (a.n[i] && p) check(p, a.n[i], pc, fn);
    }
    va_end(dest);
    return 1;
}

/* ---- the stream forms checked before they store (issue 23): a stream cannot be read twice, so its one real
 * call is made with a rewritten format whose destinations are the runtime's own: each assigning %s %[ %c (and
 * %ls %l[ %lc %S %C) becomes glibc's assignment-allocating form (%ms %m[ %mNc %mls ...) into a char ** slot,
 * each number and %p into a slot of its own, each %n (any size) a %lln into a slot preset to -1. glibc's
 * mallocs for %m, made while the call runs, are served by an arena of the runtime's (struct mc_arena: the
 * allocators of each mode hand them over while *hook points at it), so the program's blocks are neither
 * numbered differently nor touched; glibc shrinks each %m buffer to the bytes it stored (the terminator
 * included where it writes one), so the block's requested size is the range to check. Afterwards what was
 * assigned (a non-NULL %m slot: glibc frees and clears the slot of a conversion that failed; the first r counted
 * conversions for the numbers; a %n slot no longer -1) is checked at the program's destination, and only then
 * copied there. The stream's buffers are allocated before the call (_IO_doallocbuf, _IO_wdoallocbuf: the
 * first read would do it inside the call, into the arena). Not expressible so, and left to the check after the
 * call: a positional format (%1$s), more than MC_SCAN_ARGS arguments, the program's own %m or GNU %as, a format
 * over 1023 characters, a string conversion with a size other than l, a NULL destination (glibc's
 * conversion error), a stream without a descriptor (fmemopen, fopencookie: a cookie's functions are the
 * program's, whose mallocs the arena would take), a wide call on a byte stream or a narrow one on a wide
 * stream (glibc refuses them). ---- */
#define MC_ARENA_MAPS 16
struct mc_arena_head { size_t size, cap; };   /* before each block: the size asked for, the room */
struct mc_arena {
    mc_line_map map;
    size_t used;                              /* of small, bump-allocated */
    struct mc_arena_head *maps[MC_ARENA_MAPS];  /* larger blocks, mapped each */
    char small[2048] __attribute__((aligned(16)));
};

static inline int mc_arena_owns(const struct mc_arena *a, const void *p)
{
    if ((const char *)p > a->small && (const char *)p < a->small + sizeof a->small) return 1;
    for (int i = 0; i < MC_ARENA_MAPS; i++)
        if (a->maps[i] && (const void *)(a->maps[i] + 1) == p) return 1;
    return 0;
}

static inline void *mc_arena_malloc(struct mc_arena *a, size_t n)
{
    size_t need = (n + 15) & ~(size_t)15;
    struct mc_arena_head *h;
    if (need < n || need > (SIZE_MAX >> 2)) goto none;
    if (need + sizeof *h <= sizeof a->small - a->used) {
        h = (struct mc_arena_head *)(a->small + a->used);
        a->used += need + sizeof *h;
        h->cap = need;
    } else {
        int i = 0;
        while (i < MC_ARENA_MAPS && a->maps[i]) i++;
        size_t len = (need + sizeof *h + 4095) & ~(size_t)4095;
        if (i == MC_ARENA_MAPS || !(h = a->map(NULL, 0, len))) goto none;
        a->maps[i] = h;
        h->cap = len - sizeof *h;
    }
    h->size = n;
    return h + 1;
none:
    errno = ENOMEM;
    return NULL;
}

static inline void mc_arena_free(struct mc_arena *a, void *p)
{
    if (!p) return;
    struct mc_arena_head *h = (struct mc_arena_head *)p - 1;
    for (int i = 0; i < MC_ARENA_MAPS; i++)
        if (a->maps[i] == h) {
            a->maps[i] = NULL;
            a->map(h, h->cap + sizeof *h, 0);
            return;
        }
    if ((char *)p + h->cap == a->small + a->used) a->used -= h->cap + sizeof *h;   /* the last one's room */
}

static inline void *mc_arena_realloc(struct mc_arena *a, void *p, size_t n)
{
    if (!p) return mc_arena_malloc(a, n);
    struct mc_arena_head *h = (struct mc_arena_head *)p - 1;
    if (n <= h->cap) {
        h->size = n;
        return p;
    }
    size_t need = (n + 15) & ~(size_t)15;
    if ((char *)p + h->cap == a->small + a->used && need >= n && (char *)p + need <= a->small + sizeof a->small) {
        a->used += need - h->cap;   /* the last small block grows in place */
        h->cap = need;
        h->size = n;
        return p;
    }
    char *q = mc_arena_malloc(a, n);
    if (!q) return NULL;
    for (size_t i = 0; i < h->size; i++) q[i] = ((char *)p)[i];
    mc_arena_free(a, p);
    return q;
}

static inline size_t mc_arena_size(const void *p) { return ((const struct mc_arena_head *)p - 1)->size; }

enum { MC_FS_NUM = 1, MC_FS_STR, MC_FS_N };

struct mc_fscan {
    int args, r, err;                   /* the program's pointer arguments; the call's result and errno */
    void *dest[MC_SCAN_ARGS];           /* the program's destinations */
    void *at[MC_SCAN_ARGS];             /* the call's: a slot below */
    unsigned char kind[MC_SCAN_ARGS], size[MC_SCAN_ARGS];   /* MC_FS_*; a number's or %n's bytes */
    signed char counted[MC_SCAN_ARGS];  /* a number's place among the conversions the result counts */
    union { long long n; long double d; char *s; } slot[MC_SCAN_ARGS];
    struct mc_arena arena;
};

/* the rewritten format: the original's characters (wide or narrow) with ASCII put in */
struct mc_fmt_out { char *c; wchar_t *w; size_t n; };
static inline void mc_fmt_orig(struct mc_fmt_out *o, const void *orig, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (o->w) o->w[o->n++] = ((const wchar_t *)orig)[i];
        else o->c[o->n++] = ((const char *)orig)[i];
}
static inline void mc_fmt_put(struct mc_fmt_out *o, const char *s)
{
    for (; *s; s++)
        if (o->w) o->w[o->n++] = (wchar_t)*s;
        else o->c[o->n++] = *s;
}

typedef int (*mc_vfscanf)(FILE *, const char *, va_list);
typedef int (*mc_vfwscanf)(FILE *, const wchar_t *, va_list);

static inline int mc_fscan_call(mc_vfscanf v, mc_vfwscanf wv, FILE *in, const void *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = wv ? wv(in, fmt, ap) : v(in, fmt, ap);
    va_end(ap);
    return r;
}

extern void _IO_doallocbuf(FILE *);
extern void _IO_wdoallocbuf(FILE *);

/* Makes v's (narrow) or wv's (wide fmt) one real call on in for the format fmt and the program's ap (left as it
 * was) into st's slots, glibc's mallocs served by st->arena (map: pages for it) while *hook points at it.
 * Returns 0 when it was not made (the format or the stream: nothing read; the caller makes the call itself
 * and checks after it), else 1 with st->r and st->err the call's result and errno; then mc_fscan_range says
 * each range to check, mc_fscan_store copies them and frees the arena. */
static inline int mc_fscan_run(struct mc_fscan *st, mc_vfscanf v, mc_vfwscanf wv, FILE *in, const void *fmt, int gnu,
                               va_list ap, mc_line_map map, struct mc_arena **hook)
{
    char f[1024];
    if (!in || !fmt || !mc_scan_ascii(fmt, wv != NULL, f, sizeof f)) return 0;
    size_t len = mc_scan_len(f);
    union { char c[1024 + 3 * MC_SCAN_ARGS]; wchar_t w[1024 + 3 * MC_SCAN_ARGS]; } out;
    struct mc_fmt_out o = {wv ? NULL : out.c, wv ? out.w : NULL, 0};
    size_t at = 0, copied = 0;
    int args = 0, counted = 0, more;
    struct mc_scan_conv cv;
    while ((more = mc_scan_next(f, &at, gnu, &cv)) > 0) {
        if (cv.alloc) return 0;
        if (cv.skip) continue;
        if (args == MC_SCAN_ARGS) return 0;
        char c = cv.c;
        int h = cv.h, l = cv.l, big = cv.big;
        size_t mod = cv.mod, conv = cv.conv;
        int k = args++, mods = h + l + big;
        st->counted[k] = -1;
        if (c == 's' || c == 'S' || c == '[' || c == 'c' || c == 'C') {
            if (mods > 1 || h || big || (l && (c == 'S' || c == 'C'))) return 0;
            mc_fmt_orig(&o, fmt, copied, mod);   /* the width, then m before the l or the conversion */
            mc_fmt_put(&o, "m");
            copied = mod;
            st->kind[k] = MC_FS_STR;
            st->slot[k].s = NULL;
            st->at[k] = &st->slot[k].s;
            counted++;
            continue;
        }
        size_t n = h == 1 ? 2 : h ? 1 : l || big ? 8 : 4;
        if (c == 'n') {
            mc_fmt_orig(&o, fmt, copied, mod);   /* any size becomes %lln */
            mc_fmt_put(&o, "ll");
            copied = conv;
            st->kind[k] = MC_FS_N;
            st->slot[k].n = -1;
        } else {
            if (c == 'e' || c == 'E' || c == 'f' || c == 'F' || c == 'g' || c == 'G' || c == 'a' || c == 'A') {
                if (h) return 0;
                n = big || l > 1 ? 10 : l ? 8 : 4;   /* an x87 long double stores 10 bytes */
            } else if (c == 'p') {
                n = sizeof(void *);
            } else if (!(c == 'd' || c == 'i' || c == 'o' || c == 'u' || c == 'x' || c == 'X' || c == 'b')) {
                return 0;
            }
            st->kind[k] = MC_FS_NUM;
            st->counted[k] = (signed char)counted++;
            st->slot[k].n = 0;
        }
        st->size[k] = (unsigned char)n;
        st->at[k] = &st->slot[k];
    }
    if (more < 0) return 0;
    mc_fmt_orig(&o, fmt, copied, len);
    if (wv) out.w[o.n] = 0;
    else out.c[o.n] = 0;
    va_list dest;
    va_copy(dest, ap);
    int null = 0;
    for (int k = 0; k < args; k++) null |= !(st->dest[k] = va_arg(dest, void *));
    va_end(dest);
    if (null) return 0;   /* glibc's conversion error (a string's), or its fault (a number's) */
    if (in->_fileno < 0) return 0;
    int saved = errno;
    if (wv ? fwide(in, 1) <= 0 : fwide(in, 0) > 0) return 0;
    flockfile(in);   /* the buffers the first read would allocate inside the call */
    _IO_doallocbuf(in);
    if (wv) _IO_wdoallocbuf(in);
    funlockfile(in);
    st->args = args;
    for (int k = args; k < MC_SCAN_ARGS; k++) st->at[k] = NULL;
    st->arena.map = map;
    st->arena.used = 0;
    for (int k = 0; k < MC_ARENA_MAPS; k++) st->arena.maps[k] = NULL;
    struct mc_fscan *a = st;
    errno = saved;
    *hook = &st->arena;
    st->r = mc_fscan_call(v, wv, in, wv ? (const void *)out.w : (const void *)out.c, MC_SCAN_AT(a));
    *hook = NULL;
    st->err = errno;
    return 1;
}

/* the bytes the call stored for the program's k-th argument (0: none) */
static inline size_t mc_fscan_range(const struct mc_fscan *st, int k)
{
    switch (st->kind[k]) {
    case MC_FS_STR: return st->slot[k].s ? mc_arena_size(st->slot[k].s) : 0;
    case MC_FS_N: return st->slot[k].n >= 0 ? st->size[k] : 0;
    default: return st->counted[k] < st->r ? st->size[k] : 0;
    }
}

/* what the call stored, copied into the program's destinations (by hand: the runtime's memcpy would check the
 * ranges again); the arena given back; errno as the call left it */
static inline void mc_fscan_store(struct mc_fscan *st)
{
    for (int k = 0; k < st->args; k++) {
        size_t n = mc_fscan_range(st, k);
        const char *from = st->kind[k] == MC_FS_STR ? st->slot[k].s : (const char *)&st->slot[k];
        union { signed char c; short h; int i; long long l; } v;
        if (st->kind[k] == MC_FS_N) {   /* %lln's count, as the program's size takes it */
            long long c = st->slot[k].n;
            if (n == 1) v.c = (signed char)c;
            else if (n == 2) v.h = (short)c;
            else if (n == 4) v.i = (int)c;
            else v.l = c;
            from = (const char *)&v;
        }
        for (size_t i = 0; i < n; i++) ((char *)st->dest[k])[i] = from[i];
        if (st->kind[k] == MC_FS_STR) mc_arena_free(&st->arena, st->slot[k].s);
    }
    for (int i = 0; i < MC_ARENA_MAPS; i++)   /* anything glibc left (it frees what it allocates) */
        if (st->arena.maps[i]) st->arena.map(st->arena.maps[i], st->arena.maps[i]->cap + sizeof(struct mc_arena_head), 0);
    errno = st->err;
}

/* The six entry points of the family under one prefix of names (pre: "", "__isoc99_" - what <stdio.h> calls
 * in ISO modes, and, since it renames scanf so, in the including file too: hence the names by asm labels -
 * or "__isoc23_"), each a call of worker(in, s, form, fmt, ap, CALLER, name) with the including file's CALLER
 * (the caller's address) and the name a report says; export makes them visible. */
#define MC_SCANF_ENTRY_POINTS(export, worker, pre, id, form)                                                   \
    export int id##_vfscanf(FILE *f, const char *fmt, va_list ap) __asm__(pre "vfscanf");                      \
    export int id##_vscanf(const char *fmt, va_list ap) __asm__(pre "vscanf");                                 \
    export int id##_vsscanf(const char *s, const char *fmt, va_list ap) __asm__(pre "vsscanf");                \
    export int id##_fscanf(FILE *f, const char *fmt, ...) __asm__(pre "fscanf");                               \
    export int id##_scanf(const char *fmt, ...) __asm__(pre "scanf");                                          \
    export int id##_sscanf(const char *s, const char *fmt, ...) __asm__(pre "sscanf");                         \
    int id##_vfscanf(FILE *f, const char *fmt, va_list ap) { return worker(f, NULL, form, fmt, ap, CALLER, "fscanf"); } \
    int id##_vscanf(const char *fmt, va_list ap) { return worker(stdin, NULL, form, fmt, ap, CALLER, "scanf"); } \
    int id##_vsscanf(const char *s, const char *fmt, va_list ap) { return worker(NULL, s, form, fmt, ap, CALLER, "sscanf"); } \
    int id##_fscanf(FILE *f, const char *fmt, ...)                                                             \
    {                                                                                                          \
        va_list ap;                                                                                            \
        va_start(ap, fmt);                                                                                     \
        int r = worker(f, NULL, form, fmt, ap, CALLER, "fscanf");                                              \
        va_end(ap);                                                                                            \
        return r;                                                                                              \
    }                                                                                                          \
    int id##_scanf(const char *fmt, ...)                                                                       \
    {                                                                                                          \
        va_list ap;                                                                                            \
        va_start(ap, fmt);                                                                                     \
        int r = worker(stdin, NULL, form, fmt, ap, CALLER, "scanf");                                           \
        va_end(ap);                                                                                            \
        return r;                                                                                              \
    }                                                                                                          \
    int id##_sscanf(const char *s, const char *fmt, ...)                                                       \
    {                                                                                                          \
        va_list ap;                                                                                            \
        va_start(ap, fmt);                                                                                     \
        int r = worker(NULL, s, form, fmt, ap, CALLER, "sscanf");                                              \
        va_end(ap);                                                                                            \
        return r;                                                                                              \
    }

/* the same for the wide family: worker(in, s, form, fmt, ap, CALLER, name) with wide strings */
#define MC_WSCANF_ENTRY_POINTS(export, worker, pre, id, form)                                                  \
    export int id##_vfwscanf(FILE *f, const wchar_t *fmt, va_list ap) __asm__(pre "vfwscanf");                 \
    export int id##_vwscanf(const wchar_t *fmt, va_list ap) __asm__(pre "vwscanf");                            \
    export int id##_vswscanf(const wchar_t *s, const wchar_t *fmt, va_list ap) __asm__(pre "vswscanf");        \
    export int id##_fwscanf(FILE *f, const wchar_t *fmt, ...) __asm__(pre "fwscanf");                          \
    export int id##_wscanf(const wchar_t *fmt, ...) __asm__(pre "wscanf");                                     \
    export int id##_swscanf(const wchar_t *s, const wchar_t *fmt, ...) __asm__(pre "swscanf");                 \
    int id##_vfwscanf(FILE *f, const wchar_t *fmt, va_list ap) { return worker(f, NULL, form, fmt, ap, CALLER, "fwscanf"); } \
    int id##_vwscanf(const wchar_t *fmt, va_list ap) { return worker(stdin, NULL, form, fmt, ap, CALLER, "wscanf"); } \
    int id##_vswscanf(const wchar_t *s, const wchar_t *fmt, va_list ap) { return worker(NULL, s, form, fmt, ap, CALLER, "swscanf"); } \
    int id##_fwscanf(FILE *f, const wchar_t *fmt, ...)                                                         \
    {                                                                                                          \
        va_list ap;                                                                                            \
        va_start(ap, fmt);                                                                                     \
        int r = worker(f, NULL, form, fmt, ap, CALLER, "fwscanf");                                             \
        va_end(ap);                                                                                            \
        return r;                                                                                              \
    }                                                                                                          \
    int id##_wscanf(const wchar_t *fmt, ...)                                                                   \
    {                                                                                                          \
        va_list ap;                                                                                            \
        va_start(ap, fmt);                                                                                     \
        int r = worker(stdin, NULL, form, fmt, ap, CALLER, "wscanf");                                          \
        va_end(ap);                                                                                            \
        return r;                                                                                              \
    }                                                                                                          \
    int id##_swscanf(const wchar_t *s, const wchar_t *fmt, ...)                                                \
    {                                                                                                          \
        va_list ap;                                                                                            \
        va_start(ap, fmt);                                                                                     \
        int r = worker(NULL, s, form, fmt, ap, CALLER, "swscanf");                                             \
        va_end(ap);                                                                                            \
        return r;                                                                                              \
    }

#endif
