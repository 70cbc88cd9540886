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
 * The _FORTIFY_SOURCE forms (__printf_chk, __sprintf_chk, __swprintf_chk, __wcscpy_chk, ...) are checked as the
 * plain ones, the formatting left to glibc's _chk function.
 * Positional arguments (%2$s, %.*3$s) are walked by their numbers.
 * What it gets wrong: a format mixing positional and sequential conversions, or numbering more than 128
 * arguments, has only its format string checked; a %s argument that is not terminated is read by the check until a 0
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
    mc_count_libc(pc);
    if (mc_first_bad((uintptr_t)p, n)) mc_report_access((uintptr_t)p, n, access, pc, fn);
    else if (mc_rewritten) mc_check_stack_var((uintptr_t)p, n, access, pc, fn);
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

/* Positional arguments (%2$s, %*1$d, %.*3$s): the format is read twice, first for the type of every argument
 * by its number, then the arguments are fetched in number order (as vfprintf does) and each %s, %ls and %n
 * conversion checked with its own argument. A format that mixes positional and sequential conversions, skips a
 * number, or names more than 128 arguments is left unchecked (glibc's behaviour is undefined there too). */
enum { A_NONE, A_INT, A_LONG, A_DOUBLE, A_LDOUBLE, A_PTR };
#define MAX_POS 128
static int pos_number(const void *fmt, size_t w, size_t *i)
{
    int n = 0;
    for (;;) {
        unsigned c = w == 1 ? ((const unsigned char *)fmt)[*i] : (unsigned)((const wchar_t *)fmt)[*i];
        if (c < '0' || c > '9') return n;
        n = n * 10 + (int)(c - '0');
        if (n > MAX_POS) n = MAX_POS + 1;
        (*i)++;
    }
}

#define POSITIONAL_WALKER(NAME, CHAR) \
static void NAME(const CHAR *fmt, va_list args, const void *pc, const char *fn) \
{ \
    struct conv { int arg, prec_arg, prec, lng, shrt; CHAR c; } convs[MAX_POS]; \
    uint8_t type[MAX_POS + 1] = {0}; \
    int nconv = 0, max = 0; \
    for (size_t i = 0; fmt[i]; i++) { \
        if (fmt[i] != '%') continue; \
        i++; \
        if (fmt[i] == '%') continue; \
        int arg = pos_number(fmt, sizeof(CHAR), &i); \
        if (fmt[i] != '$' || arg < 1 || arg > MAX_POS || nconv == MAX_POS) return; \
        i++; \
        struct conv v = {arg, 0, -1, 0, 0, 0}; \
        while (fmt[i] && strchr_flags(fmt[i])) i++; \
        if (fmt[i] == '*') { \
            i++; \
            int k = pos_number(fmt, sizeof(CHAR), &i); \
            if (fmt[i] != '$' || k < 1 || k > MAX_POS) return; \
            i++; \
            type[k] = A_INT; max = k > max ? k : max; \
        } else while (fmt[i] >= '0' && fmt[i] <= '9') i++; \
        if (fmt[i] == '.') { \
            i++; \
            if (fmt[i] == '*') { \
                i++; \
                int k = pos_number(fmt, sizeof(CHAR), &i); \
                if (fmt[i] != '$' || k < 1 || k > MAX_POS) return; \
                i++; \
                type[k] = A_INT; max = k > max ? k : max; v.prec_arg = k; \
            } else { v.prec = 0; while (fmt[i] >= '0' && fmt[i] <= '9') v.prec = v.prec * 10 + (fmt[i++] - '0'); } \
        } \
        int dbl_long = 0; \
        for (;; i++) { \
            if (fmt[i] == 'h') { v.shrt++; continue; } \
            if (fmt[i] == 'l' || fmt[i] == 'j' || fmt[i] == 'z' || fmt[i] == 't' || fmt[i] == 'q') { v.lng++; continue; } \
            if (fmt[i] == 'L') { dbl_long = 1; v.lng = 2; continue; } \
            break; \
        } \
        v.c = fmt[i]; \
        uint8_t t; \
        switch (fmt[i]) { \
        case 'd': case 'i': case 'o': case 'u': case 'x': case 'X': t = v.lng ? A_LONG : A_INT; break; \
        case 'c': case 'C': t = A_INT; break; \
        case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case 'a': case 'A': t = dbl_long ? A_LDOUBLE : A_DOUBLE; break; \
        case 'p': case 'n': case 's': case 'S': t = A_PTR; break; \
        default: return;                     /* %m takes no argument and cannot be numbered; anything else: stop */ \
        } \
        if (type[arg] && type[arg] != t) return; \
        type[arg] = t; \
        max = arg > max ? arg : max; \
        convs[nconv++] = v; \
        if (!fmt[i]) break; \
    } \
    union { long l; void *p; } value[MAX_POS + 1]; \
    va_list ap; \
    va_copy(ap, args); \
    for (int k = 1; k <= max; k++) { \
        switch (type[k]) { \
        case A_INT: value[k].l = va_arg(ap, int); break; \
        case A_LONG: value[k].l = va_arg(ap, long); break; \
        case A_DOUBLE: (void)va_arg(ap, double); break; \
        case A_LDOUBLE: (void)va_arg(ap, long double); break; \
        case A_PTR: value[k].p = va_arg(ap, void *); break; \
        default: va_end(ap); return;         /* a number no conversion names: its type is unknown */ \
        } \
    } \
    va_end(ap); \
    for (int j = 0; j < nconv; j++) { \
        struct conv *v = &convs[j]; \
        int prec = v->prec_arg ? (int)value[v->prec_arg].l : v->prec; \
        void *p = value[v->arg].p; \
        if (v->c == 'n') check(p, v->lng ? sizeof(long) : v->shrt == 1 ? sizeof(short) : v->shrt ? 1 : sizeof(int), MC_WRITE, pc, fn); \
        else if (v->c == 's' && !v->lng) { if (p) check(p, string_extent(p, (size_t)prec, prec >= 0), MC_READ, pc, fn); } \
        else if (v->c == 's' || v->c == 'S') { if (p) check(p, wide_extent(p, (size_t)prec, prec >= 0), MC_READ, pc, fn); } \
    } \
}

POSITIONAL_WALKER(check_positional, char)
POSITIONAL_WALKER(check_wpositional, wchar_t)

/* The arguments a format reads: each %s and %ls up to its precision or terminator, each %n written. */
#define FORMAT_WALKER(NAME, CHAR, CHECK_FMT, POSITIONAL) \
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
        if (*f == '$') { va_end(ap); POSITIONAL(fmt, args, pc, fn); return; } \
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

FORMAT_WALKER(check_format, char, check_string, check_positional)
FORMAT_WALKER(check_wformat, wchar_t, check_wide_string, check_wpositional)

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

static wchar_t *wcscpy_at(wchar_t *d, const wchar_t *s, const void *pc)
{
    size_t bytes = wide_extent(s, 0, 0);
    check(s, bytes, MC_READ, pc, "wcscpy");
    check(d, bytes, MC_WRITE, pc, "wcscpy");
    wmove(d, s, wlen(s) + 1);
    return d;
}

MC_EXPORT wchar_t *wcscpy(wchar_t *d, const wchar_t *s) { return wcscpy_at(d, s, CALLER); }

static wchar_t *wcsncpy_at(wchar_t *d, const wchar_t *s, size_t max, const void *pc)
{
    check(s, wide_extent(s, max, 1), MC_READ, pc, "wcsncpy");
    check(d, max * W, MC_WRITE, pc, "wcsncpy");
    size_t n = 0;
    while (n < max && s[n]) n++;
    wmove(d, s, n);
    for (size_t i = n; i < max; i++) d[i] = 0;
    return d;
}

MC_EXPORT wchar_t *wcsncpy(wchar_t *d, const wchar_t *s, size_t max) { return wcsncpy_at(d, s, max, CALLER); }

static wchar_t *wcscat_at(wchar_t *d, const wchar_t *s, const void *pc)
{
    size_t dbytes = wide_extent(d, 0, 0);
    check(d, dbytes, MC_READ, pc, "wcscat");
    size_t sbytes = wide_extent(s, 0, 0);
    check(s, sbytes, MC_READ, pc, "wcscat");
    size_t dn = wlen(d);
    check(d + dn, sbytes, MC_WRITE, pc, "wcscat");
    wmove(d + dn, s, wlen(s) + 1);
    return d;
}

MC_EXPORT wchar_t *wcscat(wchar_t *d, const wchar_t *s) { return wcscat_at(d, s, CALLER); }

static wchar_t *wcsncat_at(wchar_t *d, const wchar_t *s, size_t max, const void *pc)
{
    check(d, wide_extent(d, 0, 0), MC_READ, pc, "wcsncat");
    check(s, wide_extent(s, max, 1), MC_READ, pc, "wcsncat");
    size_t dn = wlen(d), n = 0;
    while (n < max && s[n]) n++;
    check(d + dn, (n + 1) * W, MC_WRITE, pc, "wcsncat");
    wmove(d + dn, s, n);
    d[dn + n] = 0;
    return d;
}

MC_EXPORT wchar_t *wcsncat(wchar_t *d, const wchar_t *s, size_t max) { return wcsncat_at(d, s, max, CALLER); }

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

static wchar_t *wmemcpy_at(wchar_t *d, const wchar_t *s, size_t n, const void *pc)
{
    check(s, n * W, MC_READ, pc, "wmemcpy");
    check(d, n * W, MC_WRITE, pc, "wmemcpy");
    wmove(d, s, n);
    return d;
}

MC_EXPORT wchar_t *wmemcpy(wchar_t *d, const wchar_t *s, size_t n) { return wmemcpy_at(d, s, n, CALLER); }

static wchar_t *wmemmove_at(wchar_t *d, const wchar_t *s, size_t n, const void *pc)
{
    check(s, n * W, MC_READ, pc, "wmemmove");
    check(d, n * W, MC_WRITE, pc, "wmemmove");
    wmove(d, s, n);
    return d;
}

MC_EXPORT wchar_t *wmemmove(wchar_t *d, const wchar_t *s, size_t n) { return wmemmove_at(d, s, n, CALLER); }

static wchar_t *wmemset_at(wchar_t *d, wchar_t c, size_t n, const void *pc)
{
    check(d, n * W, MC_WRITE, pc, "wmemset");
    for (size_t i = 0; i < n; i++) d[i] = c;
    return d;
}

MC_EXPORT wchar_t *wmemset(wchar_t *d, wchar_t c, size_t n) { return wmemset_at(d, c, n, CALLER); }

/* ---- _FORTIFY_SOURCE: the _chk forms, checked as their plain forms and reported by those names; the
 * formatting is glibc's _chk function itself, so its own refusals (%n in a writable format, a size over the
 * destination's) stay what they are natively ---- */

static struct {
    int (*vfprintf)(FILE *, int, const char *, va_list);
    int (*vdprintf)(int, int, const char *, va_list);
    int (*vsprintf)(char *, int, size_t, const char *, va_list);
    int (*vsnprintf)(char *, size_t, int, size_t, const char *, va_list);
    int (*vfwprintf)(FILE *, int, const wchar_t *, va_list);
} chk;

static void resolve_chk(void)
{
    resolve();
    if (chk.vfprintf) return;
#define R(f) chk.f = (typeof(chk.f))dlsym(RTLD_NEXT, "__" #f "_chk")
    R(vdprintf); R(vsprintf); R(vsnprintf); R(vfwprintf); R(vfprintf);
#undef R
}

static int chk_vfprintf(FILE *f, int flag, const char *fmt, va_list ap, const void *pc, const char *fn)
{
    resolve_chk();
    check_format(fmt, ap, pc, fn);
    return chk.vfprintf(f, flag, fmt, ap);
}

MC_EXPORT int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap) { return chk_vfprintf(f, flag, fmt, ap, CALLER, "vfprintf"); }
MC_EXPORT int __vprintf_chk(int flag, const char *fmt, va_list ap) { return chk_vfprintf(stdout, flag, fmt, ap, CALLER, "vprintf"); }

MC_EXPORT int __fprintf_chk(FILE *f, int flag, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = chk_vfprintf(f, flag, fmt, ap, CALLER, "fprintf");
    va_end(ap);
    return k;
}

MC_EXPORT int __printf_chk(int flag, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = chk_vfprintf(stdout, flag, fmt, ap, CALLER, "printf");
    va_end(ap);
    return k;
}

static int chk_vdprintf(int fd, int flag, const char *fmt, va_list ap, const void *pc, const char *fn)
{
    resolve_chk();
    check_format(fmt, ap, pc, fn);
    return chk.vdprintf(fd, flag, fmt, ap);
}

MC_EXPORT int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap) { return chk_vdprintf(fd, flag, fmt, ap, CALLER, "vdprintf"); }

MC_EXPORT int __dprintf_chk(int fd, int flag, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = chk_vdprintf(fd, flag, fmt, ap, CALLER, "dprintf");
    va_end(ap);
    return k;
}

/* sprintf: the length first, the destination checked, then glibc's __vsprintf_chk (or its failure) */
static int chk_vsnprintf(char *d, size_t size, int bounded, int flag, size_t slen, const char *fmt, va_list ap,
                         const void *pc, const char *fn)
{
    resolve_chk();
    check_format(fmt, ap, pc, fn);
    va_list ap2;
    va_copy(ap2, ap);
    int n = real.vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n >= 0) {
        size_t want = (size_t)n + 1;
        if (bounded && want > size) want = size;
        if (want) check(d, want, MC_WRITE, pc, fn);
        if (want > slen) {
            /* reported (continue mode goes on): glibc's _chk would stop it, the plain form writes */
            mc_fortify_fail(d, want, slen, pc, fn);
            return bounded ? real.vsnprintf(d, size, fmt, ap) : real.vsprintf(d, fmt, ap);
        }
    }
    return bounded ? chk.vsnprintf(d, size, flag, slen, fmt, ap) : chk.vsprintf(d, flag, slen, fmt, ap);
}

MC_EXPORT int __vsprintf_chk(char *d, int flag, size_t slen, const char *fmt, va_list ap)
{
    return chk_vsnprintf(d, 0, 0, flag, slen, fmt, ap, CALLER, "vsprintf");
}

MC_EXPORT int __vsnprintf_chk(char *d, size_t n, int flag, size_t slen, const char *fmt, va_list ap)
{
    return chk_vsnprintf(d, n, 1, flag, slen, fmt, ap, CALLER, "vsnprintf");
}

MC_EXPORT int __sprintf_chk(char *d, int flag, size_t slen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = chk_vsnprintf(d, 0, 0, flag, slen, fmt, ap, CALLER, "sprintf");
    va_end(ap);
    return k;
}

MC_EXPORT int __snprintf_chk(char *d, size_t n, int flag, size_t slen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = chk_vsnprintf(d, n, 1, flag, slen, fmt, ap, CALLER, "snprintf");
    va_end(ap);
    return k;
}

static int chk_vfwprintf(FILE *f, int flag, const wchar_t *fmt, va_list ap, const void *pc, const char *fn)
{
    resolve_chk();
    check_wformat(fmt, ap, pc, fn);
    return chk.vfwprintf(f, flag, fmt, ap);
}

MC_EXPORT int __vfwprintf_chk(FILE *f, int flag, const wchar_t *fmt, va_list ap) { return chk_vfwprintf(f, flag, fmt, ap, CALLER, "vfwprintf"); }
MC_EXPORT int __vwprintf_chk(int flag, const wchar_t *fmt, va_list ap) { return chk_vfwprintf(stdout, flag, fmt, ap, CALLER, "vwprintf"); }

MC_EXPORT int __fwprintf_chk(FILE *f, int flag, const wchar_t *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = chk_vfwprintf(f, flag, fmt, ap, CALLER, "fwprintf");
    va_end(ap);
    return k;
}

MC_EXPORT int __wprintf_chk(int flag, const wchar_t *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = chk_vfwprintf(stdout, flag, fmt, ap, CALLER, "wprintf");
    va_end(ap);
    return k;
}

/* swprintf: as its plain form, its destination checked after the call (it cannot measure first); a size over
 * the destination's (in characters) then fails as glibc's does, after the write where glibc fails before it */
static int chk_vswprintf(wchar_t *d, size_t n, size_t slen, const wchar_t *fmt, va_list ap, const void *pc, const char *fn)
{
    int k = out_vswprintf(d, n, fmt, ap, pc, fn);
    size_t wrote = k >= 0 && (size_t)k + 1 < n ? (size_t)k + 1 : n;
    if (wrote > slen) mc_fortify_fail(d, wrote * W, slen * W, pc, fn);
    else if (n > slen) mc_fortify_fail(d, 0, 0, pc, fn);         /* glibc's verdict: the size is over the destination's */
    return k;
}

MC_EXPORT int __vswprintf_chk(wchar_t *d, size_t n, int flag, size_t slen, const wchar_t *fmt, va_list ap)
{
    return chk_vswprintf(d, n, slen, fmt, ap, CALLER, "vswprintf");
}

MC_EXPORT int __swprintf_chk(wchar_t *d, size_t n, int flag, size_t slen, const wchar_t *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = chk_vswprintf(d, n, slen, fmt, ap, CALLER, "swprintf");
    va_end(ap);
    return k;
}

/* the wide string and memory forms: sizes in characters */
MC_EXPORT wchar_t *__wmemcpy_chk(wchar_t *d, const wchar_t *s, size_t n, size_t dl)
{
    if (n > dl) mc_fortify_fail(d, n * W, dl * W, CALLER, "wmemcpy");
    return wmemcpy_at(d, s, n, CALLER);
}

MC_EXPORT wchar_t *__wmemmove_chk(wchar_t *d, const wchar_t *s, size_t n, size_t dl)
{
    if (n > dl) mc_fortify_fail(d, n * W, dl * W, CALLER, "wmemmove");
    return wmemmove_at(d, s, n, CALLER);
}

MC_EXPORT wchar_t *__wmemset_chk(wchar_t *d, wchar_t c, size_t n, size_t dl)
{
    if (n > dl) mc_fortify_fail(d, n * W, dl * W, CALLER, "wmemset");
    return wmemset_at(d, c, n, CALLER);
}

MC_EXPORT wchar_t *__wcscpy_chk(wchar_t *d, const wchar_t *s, size_t dl)
{
    const void *pc = CALLER;
    size_t bytes = wide_extent(s, 0, 0);
    check(s, bytes, MC_READ, pc, "wcscpy");
    if (bytes > dl * W) mc_fortify_fail(d, bytes, dl * W, pc, "wcscpy");
    return wcscpy_at(d, s, pc);
}

MC_EXPORT wchar_t *__wcsncpy_chk(wchar_t *d, const wchar_t *s, size_t max, size_t dl)
{
    if (max > dl) mc_fortify_fail(d, max * W, dl * W, CALLER, "wcsncpy");
    return wcsncpy_at(d, s, max, CALLER);
}

MC_EXPORT wchar_t *__wcscat_chk(wchar_t *d, const wchar_t *s, size_t dl)
{
    const void *pc = CALLER;
    size_t dbytes = wide_extent(d, 0, 0), sbytes = wide_extent(s, 0, 0);
    check(d, dbytes, MC_READ, pc, "wcscat");
    check(s, sbytes, MC_READ, pc, "wcscat");
    if (dbytes - W + sbytes > dl * W) mc_fortify_fail(d, dbytes - W + sbytes, dl * W, pc, "wcscat");
    return wcscat_at(d, s, pc);
}

MC_EXPORT wchar_t *__wcsncat_chk(wchar_t *d, const wchar_t *s, size_t max, size_t dl)
{
    const void *pc = CALLER;
    size_t dbytes = wide_extent(d, 0, 0), sbytes = wide_extent(s, max, 1);
    check(d, dbytes, MC_READ, pc, "wcsncat");
    check(s, sbytes, MC_READ, pc, "wcsncat");
    size_t n = 0;
    while (n < max && s[n]) n++;
    if (dbytes + n * W > dl * W) mc_fortify_fail(d, dbytes + n * W, dl * W, pc, "wcsncat");
    return wcsncat_at(d, s, max, pc);
}
