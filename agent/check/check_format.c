/*
 * check_format.c: the printf family, puts and fputs, and the wide-character string functions of libc,
 * checked by what they mean to read and write (as check_libc.c does for the byte functions): the format
 * string and every %s (%ls) argument are read up to their terminator or precision, sprintf writes its
 * result and the terminator, snprintf as much of that as its size allows, %n writes an int. The report
 * names the function ("read 17 bytes by printf") and the program's call site. The destination of sprintf
 * and snprintf is checked before anything is written (the length comes from a first vsnprintf into
 * nothing), so an overflow is reported before it corrupts memory; the formatting itself is libc's.
 *
 * Checked: printf fprintf dprintf sprintf snprintf vprintf vfprintf vdprintf vsprintf vsnprintf puts fputs,
 * wprintf fwprintf swprintf vwprintf vfwprintf vswprintf fputws (swprintf's destination after the call: it
 * cannot measure first), wcslen wcsnlen wcscpy wcsncpy wcscat wcsncat wcscmp wcsdup wmemcpy wmemmove wmemset.
 * What it gets wrong: a format with positional arguments (%1$s) is not walked (only the format string is
 * checked); the _chk variants
 * of _FORTIFY_SOURCE are not wrapped; a %s argument that is not terminated is read by the check until a 0
 * byte or an unaddressable byte, whichever comes first.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <wchar.h>

#include "check.h"

void *mc_malloc_at(size_t n, const void *pc);

static struct {
    int (*vfprintf)(FILE *, const char *, va_list);
    int (*vdprintf)(int, const char *, va_list);
    int (*vsprintf)(char *, const char *, va_list);
    int (*vsnprintf)(char *, size_t, const char *, va_list);
    int (*fputs)(const char *, FILE *);
    int (*puts)(const char *);
    int (*vfwprintf)(FILE *, const wchar_t *, va_list);
    int (*vswprintf)(wchar_t *, size_t, const wchar_t *, va_list);
    int (*fputws)(const wchar_t *, FILE *);
} real;

static void resolve(void)
{
    if (real.vfprintf) return;
#define R(f) real.f = (typeof(real.f))dlsym(RTLD_NEXT, #f)
    R(vdprintf); R(vsprintf); R(vsnprintf); R(fputs); R(puts); R(vfwprintf); R(vswprintf); R(fputws); R(vfprintf);
#undef R
}

/* vsnprintf for the runtime's own messages: libc's, so that a report never checks itself */
int mc_vsnprintf(char *d, size_t n, const char *fmt, va_list ap)
{
    resolve();
    return real.vsnprintf(d, n, fmt, ap);
}

int mc_snprintf(char *d, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = mc_vsnprintf(d, n, fmt, ap);
    va_end(ap);
    return k;
}

static void check(const void *p, size_t n, enum mc_access access, const void *pc, const char *fn)
{
    mc_init();
    mc_count_libc();
    if (mc_first_bad((uintptr_t)p, n)) mc_report_access((uintptr_t)p, n, access, pc, fn);
}

/* The bytes a string read stops at: its terminator, its limit (max, when limited), or the first byte that may
 * not be touched (then one more than that, which makes the check report exactly there). */
static size_t string_extent(const char *s, size_t max, int limited)
{
    size_t n = 0;
    for (;;) {
        if (limited && n == max) return n;
        uintptr_t a = (uintptr_t)s + n;
        uint8_t v = *MC_SHADOW(a);
        if (v != 0 && (v >= 0x80 || (a & 7) >= v)) return n + 1;
        if (s[n] == 0) return n + 1;
        n++;
    }
}

static size_t wide_extent(const wchar_t *s, size_t max, int limited)
{
    size_t n = 0;
    for (;;) {
        if (limited && n == max) return n * sizeof *s;
        if (mc_first_bad((uintptr_t)(s + n), sizeof *s)) return (n + 1) * sizeof *s;
        if (s[n] == 0) return (n + 1) * sizeof *s;
        n++;
    }
}

static int strchr_flags(int c)
{
    return c == '-' || c == '+' || c == ' ' || c == '#' || c == '0' || c == '\'' || c == 'I';
}

static void check_string(const char *s, const void *pc, const char *fn)
{
    check(s, string_extent(s, 0, 0), MC_READ, pc, fn);
}

/* The arguments a format reads: each %s and %ls up to its precision or terminator, each %n written. */
#define FORMAT_WALKER(NAME, CHAR, CHECK_FMT) \
static void NAME(const CHAR *fmt, va_list args, const void *pc, const char *fn) \
{ \
    CHECK_FMT(fmt, pc, fn); \
    va_list ap; \
    va_copy(ap, args); \
    for (const CHAR *f = fmt; *f; f++) { \
        if (*f != '%') continue; \
        f++; \
        if (*f == '%') continue; \
        int prec = -1, lng = 0, dbl_long = 0, shrt = 0; \
        while (*f && strchr_flags(*f)) f++; \
        if (*f == '*') { (void)va_arg(ap, int); f++; } \
        else while (*f >= '0' && *f <= '9') f++; \
        if (*f == '$') break;               /* positional arguments: not walked */ \
        if (*f == '.') { \
            f++; \
            if (*f == '*') { prec = va_arg(ap, int); f++; } \
            else { prec = 0; while (*f >= '0' && *f <= '9') prec = prec * 10 + (*f++ - '0'); } \
        } \
        for (;; f++) { \
            if (*f == 'h') { shrt++; continue; } \
            if (*f == 'l' || *f == 'j' || *f == 'z' || *f == 't' || *f == 'q') { lng++; continue; } \
            if (*f == 'L') { dbl_long = 1; lng = 2; continue; } \
            break; \
        } \
        switch (*f) { \
        case 'd': case 'i': case 'o': case 'u': case 'x': case 'X': \
            if (lng) (void)va_arg(ap, long); else (void)va_arg(ap, int); \
            break; \
        case 'c': \
            (void)va_arg(ap, int); \
            break; \
        case 'C': \
            (void)va_arg(ap, int); \
            break; \
        case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case 'a': case 'A': \
            if (dbl_long) (void)va_arg(ap, long double); else (void)va_arg(ap, double); \
            break; \
        case 'p': \
            (void)va_arg(ap, void *); \
            break; \
        case 'n': { \
            void *p = va_arg(ap, void *); \
            check(p, lng ? sizeof(long) : shrt == 1 ? sizeof(short) : shrt ? 1 : sizeof(int), MC_WRITE, pc, fn); \
            break; \
        } \
        case 's': case 'S': { \
            if (*f == 's' && !lng) { \
                const char *s = va_arg(ap, const char *); \
                if (s) check(s, string_extent(s, (size_t)prec, prec >= 0), MC_READ, pc, fn); \
            } else { \
                const wchar_t *s = va_arg(ap, const wchar_t *); \
                if (s) check(s, wide_extent(s, (size_t)prec, prec >= 0), MC_READ, pc, fn); \
            } \
            break; \
        } \
        case 'm': \
            break; \
        default: \
            va_end(ap); \
            return;                          /* something not understood: stop walking */ \
        } \
        if (!*f) break; \
    } \
    va_end(ap); \
}

static void check_wide_string(const wchar_t *s, const void *pc, const char *fn)
{
    check(s, wide_extent(s, 0, 0), MC_READ, pc, fn);
}

FORMAT_WALKER(check_format, char, check_string)
FORMAT_WALKER(check_wformat, wchar_t, check_wide_string)

#define CALLER __builtin_return_address(0)

static int out_vfprintf(FILE *f, const char *fmt, va_list ap, const void *pc, const char *fn)
{
    resolve();
    check_format(fmt, ap, pc, fn);
    return real.vfprintf(f, fmt, ap);
}

MC_EXPORT int vfprintf(FILE *f, const char *fmt, va_list ap) { return out_vfprintf(f, fmt, ap, CALLER, "vfprintf"); }
MC_EXPORT int vprintf(const char *fmt, va_list ap) { return out_vfprintf(stdout, fmt, ap, CALLER, "vprintf"); }

MC_EXPORT int fprintf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = out_vfprintf(f, fmt, ap, CALLER, "fprintf");
    va_end(ap);
    return k;
}

MC_EXPORT int printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = out_vfprintf(stdout, fmt, ap, CALLER, "printf");
    va_end(ap);
    return k;
}

static int out_vdprintf(int fd, const char *fmt, va_list ap, const void *pc, const char *fn)
{
    resolve();
    check_format(fmt, ap, pc, fn);
    return real.vdprintf(fd, fmt, ap);
}

MC_EXPORT int vdprintf(int fd, const char *fmt, va_list ap) { return out_vdprintf(fd, fmt, ap, CALLER, "vdprintf"); }

MC_EXPORT int dprintf(int fd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = out_vdprintf(fd, fmt, ap, CALLER, "dprintf");
    va_end(ap);
    return k;
}

/* sprintf and snprintf: the length first, the destination checked, then the formatting */
static int out_vsnprintf(char *d, size_t size, int bounded, const char *fmt, va_list ap, const void *pc, const char *fn)
{
    resolve();
    check_format(fmt, ap, pc, fn);
    va_list ap2;
    va_copy(ap2, ap);
    int n = real.vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n >= 0) {
        size_t want = (size_t)n + 1;
        if (bounded && want > size) want = size;
        if (want) check(d, want, MC_WRITE, pc, fn);
    }
    return bounded ? real.vsnprintf(d, size, fmt, ap) : real.vsprintf(d, fmt, ap);
}

MC_EXPORT int vsnprintf(char *d, size_t n, const char *fmt, va_list ap) { return out_vsnprintf(d, n, 1, fmt, ap, CALLER, "vsnprintf"); }
MC_EXPORT int vsprintf(char *d, const char *fmt, va_list ap) { return out_vsnprintf(d, 0, 0, fmt, ap, CALLER, "vsprintf"); }

MC_EXPORT int snprintf(char *d, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = out_vsnprintf(d, size, 1, fmt, ap, CALLER, "snprintf");
    va_end(ap);
    return k;
}

MC_EXPORT int sprintf(char *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = out_vsnprintf(d, 0, 0, fmt, ap, CALLER, "sprintf");
    va_end(ap);
    return k;
}

MC_EXPORT int puts(const char *s)
{
    resolve();
    check_string(s, CALLER, "puts");
    return real.puts(s);
}

MC_EXPORT int fputs(const char *s, FILE *f)
{
    resolve();
    check_string(s, CALLER, "fputs");
    return real.fputs(s, f);
}

/* ---- the wide printf family: its format and %ls arguments are wide, %s ones narrow ---- */

static int out_vfwprintf(FILE *f, const wchar_t *fmt, va_list ap, const void *pc, const char *fn)
{
    resolve();
    check_wformat(fmt, ap, pc, fn);
    return real.vfwprintf(f, fmt, ap);
}

MC_EXPORT int vfwprintf(FILE *f, const wchar_t *fmt, va_list ap) { return out_vfwprintf(f, fmt, ap, CALLER, "vfwprintf"); }
MC_EXPORT int vwprintf(const wchar_t *fmt, va_list ap) { return out_vfwprintf(stdout, fmt, ap, CALLER, "vwprintf"); }

MC_EXPORT int fwprintf(FILE *f, const wchar_t *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = out_vfwprintf(f, fmt, ap, CALLER, "fwprintf");
    va_end(ap);
    return k;
}

MC_EXPORT int wprintf(const wchar_t *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = out_vfwprintf(stdout, fmt, ap, CALLER, "wprintf");
    va_end(ap);
    return k;
}

/* swprintf cannot measure its result first (it fails when the output does not fit): the destination is
 * checked after, for what was written (all of its n characters when it did not fit) */
static int out_vswprintf(wchar_t *d, size_t n, const wchar_t *fmt, va_list ap, const void *pc, const char *fn)
{
    resolve();
    check_wformat(fmt, ap, pc, fn);
    int k = real.vswprintf(d, n, fmt, ap);
    size_t wrote = k >= 0 && (size_t)k + 1 < n ? (size_t)k + 1 : n;
    if (wrote) check(d, wrote * sizeof(wchar_t), MC_WRITE, pc, fn);
    return k;
}

MC_EXPORT int vswprintf(wchar_t *d, size_t n, const wchar_t *fmt, va_list ap) { return out_vswprintf(d, n, fmt, ap, CALLER, "vswprintf"); }

MC_EXPORT int swprintf(wchar_t *d, size_t n, const wchar_t *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = out_vswprintf(d, n, fmt, ap, CALLER, "swprintf");
    va_end(ap);
    return k;
}

MC_EXPORT int fputws(const wchar_t *s, FILE *f)
{
    resolve();
    check_wide_string(s, CALLER, "fputws");
    return real.fputws(s, f);
}

/* ---- wide-character strings: wchar_t is 4 bytes here ---- */

static size_t wlen(const wchar_t *s)
{
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

static void wmove(wchar_t *d, const wchar_t *s, size_t n)
{
    if (d < s) for (size_t i = 0; i < n; i++) d[i] = s[i];
    else for (size_t i = n; i-- > 0;) d[i] = s[i];
}

#define W sizeof(wchar_t)

MC_EXPORT size_t wcslen(const wchar_t *s)
{
    size_t bytes = wide_extent(s, 0, 0);
    check(s, bytes, MC_READ, CALLER, "wcslen");
    return wlen(s);
}

MC_EXPORT size_t wcsnlen(const wchar_t *s, size_t max)
{
    size_t bytes = wide_extent(s, max, 1);
    check(s, bytes, MC_READ, CALLER, "wcsnlen");
    size_t n = 0;
    while (n < max && s[n]) n++;
    return n;
}

MC_EXPORT wchar_t *wcscpy(wchar_t *d, const wchar_t *s)
{
    size_t bytes = wide_extent(s, 0, 0);
    check(s, bytes, MC_READ, CALLER, "wcscpy");
    check(d, bytes, MC_WRITE, CALLER, "wcscpy");
    wmove(d, s, wlen(s) + 1);
    return d;
}

MC_EXPORT wchar_t *wcsncpy(wchar_t *d, const wchar_t *s, size_t max)
{
    check(s, wide_extent(s, max, 1), MC_READ, CALLER, "wcsncpy");
    check(d, max * W, MC_WRITE, CALLER, "wcsncpy");
    size_t n = 0;
    while (n < max && s[n]) n++;
    wmove(d, s, n);
    for (size_t i = n; i < max; i++) d[i] = 0;
    return d;
}

MC_EXPORT wchar_t *wcscat(wchar_t *d, const wchar_t *s)
{
    size_t dbytes = wide_extent(d, 0, 0);
    check(d, dbytes, MC_READ, CALLER, "wcscat");
    size_t sbytes = wide_extent(s, 0, 0);
    check(s, sbytes, MC_READ, CALLER, "wcscat");
    size_t dn = wlen(d);
    check(d + dn, sbytes, MC_WRITE, CALLER, "wcscat");
    wmove(d + dn, s, wlen(s) + 1);
    return d;
}

MC_EXPORT wchar_t *wcsncat(wchar_t *d, const wchar_t *s, size_t max)
{
    check(d, wide_extent(d, 0, 0), MC_READ, CALLER, "wcsncat");
    check(s, wide_extent(s, max, 1), MC_READ, CALLER, "wcsncat");
    size_t dn = wlen(d), n = 0;
    while (n < max && s[n]) n++;
    check(d + dn, (n + 1) * W, MC_WRITE, CALLER, "wcsncat");
    wmove(d + dn, s, n);
    d[dn + n] = 0;
    return d;
}

MC_EXPORT int wcscmp(const wchar_t *a, const wchar_t *b)
{
    size_t i = 0;
    while (a[i] && a[i] == b[i]) i++;
    check(a, (i + 1) * W, MC_READ, CALLER, "wcscmp");
    check(b, (i + 1) * W, MC_READ, CALLER, "wcscmp");
    return a[i] < b[i] ? -1 : a[i] > b[i];
}

MC_EXPORT wchar_t *wcsdup(const wchar_t *s)
{
    size_t bytes = wide_extent(s, 0, 0);
    check(s, bytes, MC_READ, CALLER, "wcsdup");
    size_t n = wlen(s) + 1;
    wchar_t *d = mc_malloc_at(n * W, CALLER);
    if (d) wmove(d, s, n);
    return d;
}

MC_EXPORT wchar_t *wmemcpy(wchar_t *d, const wchar_t *s, size_t n)
{
    check(s, n * W, MC_READ, CALLER, "wmemcpy");
    check(d, n * W, MC_WRITE, CALLER, "wmemcpy");
    wmove(d, s, n);
    return d;
}

MC_EXPORT wchar_t *wmemmove(wchar_t *d, const wchar_t *s, size_t n)
{
    check(s, n * W, MC_READ, CALLER, "wmemmove");
    check(d, n * W, MC_WRITE, CALLER, "wmemmove");
    wmove(d, s, n);
    return d;
}

MC_EXPORT wchar_t *wmemset(wchar_t *d, wchar_t c, size_t n)
{
    check(d, n * W, MC_WRITE, CALLER, "wmemset");
    for (size_t i = 0; i < n; i++) d[i] = c;
    return d;
}
