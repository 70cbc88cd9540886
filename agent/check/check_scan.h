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
 * characters; a narrow %Nc there counts N bytes, exact for ASCII input.
 */
#ifndef CHECK_SCAN_H
#define CHECK_SCAN_H

#include <stdarg.h>
#include <stddef.h>
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
