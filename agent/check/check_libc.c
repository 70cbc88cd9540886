/*
 * check_libc.c: libc's memory and string functions, checked by what they mean to read and write rather
 * than by their own (vector) loads: memcpy(d, s, n) reads [s, s+n) and writes [d, d+n) and its ranges may
 * not overlap; strcpy(d, s) reads strlen(s)+1 bytes of s and writes as many to d; and so on. The report
 * names the function ("written 20 bytes by memcpy") and the program's call site. The work itself is done by
 * libc's function (found with dlsym(RTLD_NEXT)), or by a byte loop before that is known.
 *
 * Checked: memcpy memmove memset memcmp bcmp strlen strnlen strcpy stpcpy strncpy strcat strncat strcmp
 * strncmp strchr strrchr strdup strndup.
 * A NULL pointer (below 64 KB) given to any of them is a null dereference, reported before libc faults.
 * What it gets wrong: only calls the program makes through the PLT are seen (libc calling itself, and calls
 * gcc inlined as plain moves, are checked by gcc's instrumentation or not at all); a string function whose
 * source is not terminated reads until libc's function stops or faults before the check sees it; memcmp and
 * strncmp are charged for their whole length even when they would stop early.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

#include "check.h"

extern void *malloc(size_t n);

static struct {
    void *(*memcpy)(void *, const void *, size_t);
    void *(*memmove)(void *, const void *, size_t);
    void *(*memset)(void *, int, size_t);
    int (*memcmp)(const void *, const void *, size_t);
    size_t (*strlen)(const char *);
    size_t (*strnlen)(const char *, size_t);
    int (*strcmp)(const char *, const char *);
    int (*strncmp)(const char *, const char *, size_t);
    char *(*strchr)(const char *, int);
    char *(*strrchr)(const char *, int);
} real;

__attribute__((constructor(102))) static void resolve(void)
{
#define R(f) real.f = (typeof(real.f))dlsym(RTLD_NEXT, #f)
    R(memcpy); R(memmove); R(memset); R(memcmp); R(strlen); R(strnlen); R(strcmp); R(strncmp); R(strchr); R(strrchr);
#undef R
}

static size_t len_of(const char *s)
{
    if (real.strlen) return real.strlen(s);
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

static void copy(void *d, const void *s, size_t n)
{
    if (real.memmove) { real.memmove(d, s, n); return; }
    unsigned char *dd = d;
    const unsigned char *ss = s;
    if (dd < ss) for (size_t i = 0; i < n; i++) dd[i] = ss[i];
    else for (size_t i = n; i-- > 0;) dd[i] = ss[i];
}

static void check(const void *p, size_t n, enum mc_access access, const void *pc, const char *fn)
{
    mc_init();
    mc_count_libc();
    uintptr_t bad = mc_first_bad((uintptr_t)p, n);
    if (bad) mc_report_access((uintptr_t)p, n, access, pc, fn);
}

static void overlap(const void *d, const void *s, size_t n, const void *pc, const char *fn)
{
    uintptr_t a = (uintptr_t)d, b = (uintptr_t)s;
    if (n && a != b && (a < b ? b - a < n : a - b < n)) mc_report_overlap((uintptr_t)d, (uintptr_t)s, n, pc, fn);
}

/* [d, d+dn) written and [s, s+sn) read may not overlap (strcat, strncpy: the two lengths differ) */
static void overlap2(const void *d, size_t dn, const void *s, size_t sn, const void *pc, const char *fn)
{
    uintptr_t a = (uintptr_t)d, b = (uintptr_t)s;
    if (dn && sn && a < b + sn && b < a + dn) mc_report_overlap(a, b, dn < sn ? dn : sn, pc, fn);
}

#define CALLER __builtin_return_address(0)

/* A NULL (or near-NULL) pointer given to a function: reported as a null dereference before libc faults on it
 * (the first 64 KB's shadow says so: check_shadow.c). */
#define GUARD(p, access, fn) do { if ((uintptr_t)(p) < 65536) { mc_init(); mc_report_access((uintptr_t)(p), 1, access, CALLER, fn); } } while (0)

MC_EXPORT void *memcpy(void *d, const void *s, size_t n)
{
    if (n) { GUARD(s, MC_READ, "memcpy"); GUARD(d, MC_WRITE, "memcpy"); }
    check(s, n, MC_READ, CALLER, "memcpy");
    check(d, n, MC_WRITE, CALLER, "memcpy");
    overlap(d, s, n, CALLER, "memcpy");
    if (real.memcpy) return real.memcpy(d, s, n);
    copy(d, s, n);
    return d;
}

MC_EXPORT void *memmove(void *d, const void *s, size_t n)
{
    if (n) { GUARD(s, MC_READ, "memmove"); GUARD(d, MC_WRITE, "memmove"); }
    check(s, n, MC_READ, CALLER, "memmove");
    check(d, n, MC_WRITE, CALLER, "memmove");
    copy(d, s, n);
    return d;
}

MC_EXPORT void *memset(void *d, int c, size_t n)
{
    if (n) GUARD(d, MC_WRITE, "memset");
    check(d, n, MC_WRITE, CALLER, "memset");
    if (real.memset) return real.memset(d, c, n);
    for (size_t i = 0; i < n; i++) ((unsigned char *)d)[i] = (unsigned char)c;
    return d;
}

static int compare(const void *a, const void *b, size_t n)
{
    if (real.memcmp) return real.memcmp(a, b, n);
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++) if (x[i] != y[i]) return x[i] - y[i];
    return 0;
}

MC_EXPORT int memcmp(const void *a, const void *b, size_t n)
{
    if (n) { GUARD(a, MC_READ, "memcmp"); GUARD(b, MC_READ, "memcmp"); }
    check(a, n, MC_READ, CALLER, "memcmp");
    check(b, n, MC_READ, CALLER, "memcmp");
    return compare(a, b, n);
}

MC_EXPORT int bcmp(const void *a, const void *b, size_t n)
{
    check(a, n, MC_READ, CALLER, "bcmp");
    check(b, n, MC_READ, CALLER, "bcmp");
    return compare(a, b, n);
}

MC_EXPORT size_t strlen(const char *s)
{
    GUARD(s, MC_READ, "strlen");
    size_t n = len_of(s);
    check(s, n + 1, MC_READ, CALLER, "strlen");
    return n;
}

MC_EXPORT size_t strnlen(const char *s, size_t max)
{
    if (max) GUARD(s, MC_READ, "strnlen");
    size_t n = 0;
    if (real.strnlen) n = real.strnlen(s, max);
    else while (n < max && s[n]) n++;
    check(s, n < max ? n + 1 : max, MC_READ, CALLER, "strnlen");
    return n;
}

MC_EXPORT char *strcpy(char *d, const char *s)
{
    GUARD(s, MC_READ, "strcpy");
    GUARD(d, MC_WRITE, "strcpy");
    size_t n = len_of(s) + 1;
    check(s, n, MC_READ, CALLER, "strcpy");
    check(d, n, MC_WRITE, CALLER, "strcpy");
    overlap(d, s, n, CALLER, "strcpy");
    copy(d, s, n);
    return d;
}

MC_EXPORT char *stpcpy(char *d, const char *s)
{
    GUARD(s, MC_READ, "stpcpy");
    GUARD(d, MC_WRITE, "stpcpy");
    size_t n = len_of(s) + 1;
    check(s, n, MC_READ, CALLER, "stpcpy");
    check(d, n, MC_WRITE, CALLER, "stpcpy");
    overlap(d, s, n, CALLER, "stpcpy");
    copy(d, s, n);
    return d + n - 1;
}

MC_EXPORT char *strncpy(char *d, const char *s, size_t max)
{
    if (max) { GUARD(s, MC_READ, "strncpy"); GUARD(d, MC_WRITE, "strncpy"); }
    size_t n = 0;
    while (n < max && s[n]) n++;
    check(s, n < max ? n + 1 : max, MC_READ, CALLER, "strncpy");
    check(d, max, MC_WRITE, CALLER, "strncpy");
    overlap2(d, max, s, n < max ? n + 1 : max, CALLER, "strncpy");
    copy(d, s, n);
    for (size_t i = n; i < max; i++) d[i] = 0;
    return d;
}

MC_EXPORT char *strcat(char *d, const char *s)
{
    GUARD(d, MC_READ, "strcat");
    GUARD(s, MC_READ, "strcat");
    size_t dn = len_of(d), n = len_of(s) + 1;
    check(d, dn + 1, MC_READ, CALLER, "strcat");
    check(s, n, MC_READ, CALLER, "strcat");
    check(d + dn, n, MC_WRITE, CALLER, "strcat");
    overlap2(d, dn + n, s, n, CALLER, "strcat");
    copy(d + dn, s, n);
    return d;
}

MC_EXPORT char *strncat(char *d, const char *s, size_t max)
{
    GUARD(d, MC_READ, "strncat");
    if (max) GUARD(s, MC_READ, "strncat");
    size_t dn = len_of(d), n = 0;
    while (n < max && s[n]) n++;
    check(d, dn + 1, MC_READ, CALLER, "strncat");
    check(s, n < max ? n + 1 : max, MC_READ, CALLER, "strncat");
    check(d + dn, n + 1, MC_WRITE, CALLER, "strncat");
    overlap2(d, dn + n + 1, s, n < max ? n + 1 : max, CALLER, "strncat");
    copy(d + dn, s, n);
    d[dn + n] = 0;
    return d;
}

MC_EXPORT int strcmp(const char *a, const char *b)
{
    GUARD(a, MC_READ, "strcmp");
    GUARD(b, MC_READ, "strcmp");
    size_t i = 0;
    while (a[i] && a[i] == b[i]) i++;
    check(a, i + 1, MC_READ, CALLER, "strcmp");
    check(b, i + 1, MC_READ, CALLER, "strcmp");
    return (unsigned char)a[i] - (unsigned char)b[i];
}

MC_EXPORT int strncmp(const char *a, const char *b, size_t max)
{
    if (max) { GUARD(a, MC_READ, "strncmp"); GUARD(b, MC_READ, "strncmp"); }
    size_t i = 0;
    while (i < max && a[i] && a[i] == b[i]) i++;
    size_t n = i < max ? i + 1 : max;
    check(a, n, MC_READ, CALLER, "strncmp");
    check(b, n, MC_READ, CALLER, "strncmp");
    return i < max ? (unsigned char)a[i] - (unsigned char)b[i] : 0;
}

MC_EXPORT char *strchr(const char *s, int c)
{
    GUARD(s, MC_READ, "strchr");
    size_t i = 0;
    while (s[i] && s[i] != (char)c) i++;
    check(s, i + 1, MC_READ, CALLER, "strchr");
    return s[i] == (char)c ? (char *)s + i : NULL;
}

MC_EXPORT char *strrchr(const char *s, int c)
{
    GUARD(s, MC_READ, "strrchr");
    size_t n = len_of(s);
    check(s, n + 1, MC_READ, CALLER, "strrchr");
    if (real.strrchr) return real.strrchr(s, c);
    for (size_t i = n + 1; i-- > 0;) if (s[i] == (char)c) return (char *)s + i;
    return NULL;
}

void *mc_malloc_at(size_t n, const void *pc);

MC_EXPORT char *strdup(const char *s)
{
    GUARD(s, MC_READ, "strdup");
    size_t n = len_of(s) + 1;
    check(s, n, MC_READ, CALLER, "strdup");
    char *d = mc_malloc_at(n, CALLER);
    if (d) copy(d, s, n);
    return d;
}

MC_EXPORT char *strndup(const char *s, size_t max)
{
    if (max) GUARD(s, MC_READ, "strndup");
    size_t n = 0;
    while (n < max && s[n]) n++;
    check(s, n < max ? n + 1 : max, MC_READ, CALLER, "strndup");
    char *d = mc_malloc_at(n + 1, CALLER);
    if (d) { copy(d, s, n); d[n] = 0; }
    return d;
}
