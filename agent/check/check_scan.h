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
 * characters; a narrow %Nc there counts N bytes, exact for ASCII input. sscanf and swscanf, whose input is all
 * in memory, are first run aside into scratch destinations (mc_scan_before), so their ranges are checked before
 * the real call stores; the stream forms cannot be read twice and are checked after the call.
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

static inline void mc_scanned(const char *f, va_list ap, int n, const void *pc, const char *fn, mc_scan_wrote wrote)
{
    while (n > 0 && *f) {
        if (*f++ != '%') continue;
        if (*f == '%') { f++; continue; }
        const char *d = f;
        while (*d >= '0' && *d <= '9') d++;
        if (*d == '$') return;
        int skip = *f == '*';
        f += skip;
        size_t width = 0, longs = 0, alloc = 0;
        while (*f >= '0' && *f <= '9') width = width * 10 + (size_t)(*f++ - '0');
        for (;; f++) {
            if (*f == 'l') longs++;
            else if (*f == 'm') alloc = 1;
            else if (*f != 'h' && *f != 'j' && *f != 'z' && *f != 't' && *f != 'L' && *f != 'q') break;
        }
        char c = *f;
        if (!c) return;
        f++;
        if (c == '[') {   /* a ']' first in the set is one of its characters */
            if (*f == '^') f++;
            if (*f == ']') f++;
            while (*f && *f != ']') f++;
            if (!*f) return;
            f++;
        }
        if (skip) continue;
        void *p = va_arg(ap, void *);
        if (c == 'n') continue;   /* not counted in the result */
        n--;
        int wide = longs == 1 || c == 'S' || c == 'C';
        if (alloc || !p) continue;
        if (c == 's' || c == 'S' || c == '[')
            wrote(p, wide ? (mc_scan_wlen(p) + 1) * sizeof(wchar_t) : mc_scan_len(p) + 1, pc, fn);
        else if (c == 'c' || c == 'C')
            wrote(p, (width ? width : 1) * (wide ? sizeof(wchar_t) : 1), pc, fn);
    }
}

/* the wide family's format, walked as its ASCII copy */
static inline void mc_wscanned(const wchar_t *f, va_list ap, int n, const void *pc, const char *fn, mc_scan_wrote wrote)
{
    char narrow[1024];
    size_t k = 0;
    for (; f[k] && k + 1 < sizeof narrow; k++) narrow[k] = f[k] > 0 && f[k] < 0x80 ? (char)f[k] : '?';
    narrow[k] = 0;
    mc_scanned(narrow, ap, n, pc, fn, wrote);
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
    int args = 0, strings = 0;
    while (*f) {
        if (*f++ != '%') continue;
        if (*f == '%') { f++; continue; }
        const char *d = f;
        while (*d >= '0' && *d <= '9') d++;
        if (*d == '$') return -1;
        int skip = *f == '*';
        f += skip;
        size_t width = 0, longs = 0;
        while (*f >= '0' && *f <= '9') width = width < len ? width * 10 + (size_t)(*f - '0') : width, f++;
        for (;; f++) {
            if (*f == 'm') return -1;
            if (*f == 'a' && gnu && (f[1] == 's' || f[1] == 'S' || f[1] == '[')) return -1;
            if (*f == 'l') longs++;
            else if (*f != 'h' && *f != 'j' && *f != 'z' && *f != 't' && *f != 'L' && *f != 'q') break;
        }
        char c = *f;
        if (!c) return -1;
        f++;
        if (c == '[') {
            if (*f == '^') f++;
            if (*f == ']') f++;
            while (*f && *f != ']') f++;
            if (!*f) return -1;
            f++;
        }
        if (skip) continue;
        if (args == MC_SCAN_ARGS) return -1;
        size_t n = 16;
        if (c == 's' || c == 'S' || c == '[' || c == 'c' || c == 'C') {
            size_t chars = width && width < len ? width : len;
            size_t unit = longs == 1 || c == 'S' || c == 'C' ? sizeof(wchar_t) : wide ? 16 : 1;
            n = ((chars + 1) * unit + 15) & ~(size_t)15;
            strings++;
        }
        size[args++] = n;
    }
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
        const wchar_t *w = fmt;
        size_t k = 0;
        for (; w[k] && k + 1 < sizeof narrow; k++) narrow[k] = w[k] > 0 && w[k] < 0x80 ? (char)w[k] : '?';
        if (w[k]) return 0;
        narrow[k] = 0;
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
