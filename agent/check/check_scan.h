/*
 * check_scan.h: what a call of scanf's family stored, walked from its format after the call, shared by the
 * compiled-in checker (check_io.c, every destination against the shadow) and run --check's fault-mode agent
 * (check_input.c, destinations on the stack or in the executable's globals against their DWARF or symbol
 * extents). For each of the first n assigned conversions, when it stored a string or characters: %s and
 * %[...] the string and its terminator, %Nc N characters (1 without a width), l (or %S %C) wide ones; %n, %*,
 * the numbers and %m's buffers (their malloc is the checked one) are skipped; a format of positional
 * arguments (%1$s) is not walked. The strings are measured by hand (a wrapped strlen would report the bytes
 * past a buffer it reads).
 */
#ifndef CHECK_SCAN_H
#define CHECK_SCAN_H

#include <stdarg.h>
#include <stddef.h>
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

#endif
