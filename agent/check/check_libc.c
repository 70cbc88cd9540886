/*
 * check_libc.c: libc's memory and string functions, checked by what they mean to read and write rather
 * than by their own (vector) loads: memcpy(d, s, n) reads [s, s+n) and writes [d, d+n) and its ranges may
 * not overlap; strcpy(d, s) reads strlen(s)+1 bytes of s and writes as many to d; and so on. The report
 * names the function ("written 20 bytes by memcpy") and the program's call site. The work itself is done by
 * libc's function (found with dlsym(RTLD_NEXT)), or by a byte loop before that is known.
 *
 * Checked: memcpy memmove memset memcmp bcmp strlen strnlen strcpy stpcpy strncpy strcat strncat strcmp
 * strncmp strchr strrchr strdup strndup, and the _FORTIFY_SOURCE forms __memcpy_chk __memmove_chk __mempcpy_chk
 * __memset_chk __strcpy_chk __stpcpy_chk __strncpy_chk __strcat_chk __strncat_chk, checked as the plain ones.
 * A NULL pointer (below 64 KB) given to any of them is a null dereference, reported before libc faults.
 * What it gets wrong: only calls the program makes through the PLT are seen (libc calling itself, and calls
 * gcc inlined as plain moves, are checked by gcc's instrumentation or not at all); a string function whose
 * source is not terminated reads until libc's function stops or faults before the check sees it; memcmp and
 * strncmp are charged for their whole length even when they would stop early.
 * Cost: each range's shadow is tested inline (mc_shadow_clean, check.h: 8 granules read as one word), the exact walk
 * (mc_first_bad) only when a word is not all addressable; memcpy's two ranges are counted in one call.
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

static int ready;   /* mc_init ran: the shadow is there (a call less per range than asking mc_init each time) */

/* Inlined in each wrapper with the shadow's quick test: the wrappers' calls into the rest of the runtime
 * (mc_init, mc_first_bad) were a third of their cost on sqlite3's 3.8 M libc calls. */
static inline __attribute__((always_inline)) void test(const void *p, size_t n, enum mc_access access, const void *pc, const char *fn)
{
    if (__builtin_expect(n && !mc_shadow_clean((uintptr_t)p, n), 0) && mc_first_bad((uintptr_t)p, n))
        mc_report_access((uintptr_t)p, n, access, pc, fn);
    else if (mc_rewritten) mc_check_stack_var((uintptr_t)p, n, access, pc, fn);
}

static inline __attribute__((always_inline)) void check(const void *p, size_t n, enum mc_access access, const void *pc, const char *fn)
{
    if (__builtin_expect(!ready, 0)) { mc_init(); ready = 1; }
    mc_count_libc_n(pc, 1);
    test(p, n, access, pc, fn);
}

/* two ranges, [s, s+sn) read and then [d, d+dn) (read or written), counted in one call */
static inline __attribute__((always_inline)) void check2(const void *s, size_t sn, const void *d, size_t dn, enum mc_access access,
                                                          const void *pc, const char *fn)
{
    if (__builtin_expect(!ready, 0)) { mc_init(); ready = 1; }
    mc_count_libc_n(pc, 2);
    test(s, sn, MC_READ, pc, fn);
    test(d, dn, access, pc, fn);
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
#define GUARD(p, access, fn) do { if ((uintptr_t)(p) < 65536) { mc_init(); mc_report_access((uintptr_t)(p), 1, access, pc, fn); } } while (0)

static void *memcpy_at(void *d, const void *s, size_t n, const void *pc)
{
    if (n) { GUARD(s, MC_READ, "memcpy"); GUARD(d, MC_WRITE, "memcpy"); }
    check2(s, n, d, n, MC_WRITE, pc, "memcpy");
    overlap(d, s, n, pc, "memcpy");
    if (real.memcpy) return real.memcpy(d, s, n);
    copy(d, s, n);
    return d;
}

MC_EXPORT void *memcpy(void *d, const void *s, size_t n) { return memcpy_at(d, s, n, CALLER); }

static void *memmove_at(void *d, const void *s, size_t n, const void *pc)
{
    if (n) { GUARD(s, MC_READ, "memmove"); GUARD(d, MC_WRITE, "memmove"); }
    check2(s, n, d, n, MC_WRITE, pc, "memmove");
    copy(d, s, n);
    return d;
}

MC_EXPORT void *memmove(void *d, const void *s, size_t n) { return memmove_at(d, s, n, CALLER); }

static void *memset_at(void *d, int c, size_t n, const void *pc)
{
    if (n) GUARD(d, MC_WRITE, "memset");
    check(d, n, MC_WRITE, pc, "memset");
    if (real.memset) return real.memset(d, c, n);
    for (size_t i = 0; i < n; i++) ((unsigned char *)d)[i] = (unsigned char)c;
    return d;
}

MC_EXPORT void *memset(void *d, int c, size_t n) { return memset_at(d, c, n, CALLER); }

static int compare(const void *a, const void *b, size_t n)
{
    if (real.memcmp) return real.memcmp(a, b, n);
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++) if (x[i] != y[i]) return x[i] - y[i];
    return 0;
}

static int memcmp_at(const void *a, const void *b, size_t n, const void *pc)
{
    if (n) { GUARD(a, MC_READ, "memcmp"); GUARD(b, MC_READ, "memcmp"); }
    check2(a, n, b, n, MC_READ, pc, "memcmp");
    return compare(a, b, n);
}

MC_EXPORT int memcmp(const void *a, const void *b, size_t n) { return memcmp_at(a, b, n, CALLER); }

static int bcmp_at(const void *a, const void *b, size_t n, const void *pc)
{
    check2(a, n, b, n, MC_READ, pc, "bcmp");
    return compare(a, b, n);
}

MC_EXPORT int bcmp(const void *a, const void *b, size_t n) { return bcmp_at(a, b, n, CALLER); }

static size_t strlen_at(const char *s, const void *pc)
{
    GUARD(s, MC_READ, "strlen");
    size_t n = len_of(s);
    check(s, n + 1, MC_READ, pc, "strlen");
    return n;
}

MC_EXPORT size_t strlen(const char *s) { return strlen_at(s, CALLER); }

static size_t strnlen_at(const char *s, size_t max, const void *pc)
{
    if (max) GUARD(s, MC_READ, "strnlen");
    size_t n = 0;
    if (real.strnlen) n = real.strnlen(s, max);
    else while (n < max && s[n]) n++;
    check(s, n < max ? n + 1 : max, MC_READ, pc, "strnlen");
    return n;
}

MC_EXPORT size_t strnlen(const char *s, size_t max) { return strnlen_at(s, max, CALLER); }

static char *strcpy_at(char *d, const char *s, const void *pc)
{
    GUARD(s, MC_READ, "strcpy");
    GUARD(d, MC_WRITE, "strcpy");
    size_t n = len_of(s) + 1;
    check2(s, n, d, n, MC_WRITE, pc, "strcpy");
    overlap(d, s, n, pc, "strcpy");
    copy(d, s, n);
    return d;
}

MC_EXPORT char *strcpy(char *d, const char *s) { return strcpy_at(d, s, CALLER); }

static char *stpcpy_at(char *d, const char *s, const void *pc)
{
    GUARD(s, MC_READ, "stpcpy");
    GUARD(d, MC_WRITE, "stpcpy");
    size_t n = len_of(s) + 1;
    check2(s, n, d, n, MC_WRITE, pc, "stpcpy");
    overlap(d, s, n, pc, "stpcpy");
    copy(d, s, n);
    return d + n - 1;
}

MC_EXPORT char *stpcpy(char *d, const char *s) { return stpcpy_at(d, s, CALLER); }

static char *strncpy_at(char *d, const char *s, size_t max, const void *pc)
{
    if (max) { GUARD(s, MC_READ, "strncpy"); GUARD(d, MC_WRITE, "strncpy"); }
    size_t n = 0;
    while (n < max && s[n]) n++;
    check(s, n < max ? n + 1 : max, MC_READ, pc, "strncpy");
    check(d, max, MC_WRITE, pc, "strncpy");
    overlap2(d, max, s, n < max ? n + 1 : max, pc, "strncpy");
    copy(d, s, n);
    for (size_t i = n; i < max; i++) d[i] = 0;
    return d;
}

MC_EXPORT char *strncpy(char *d, const char *s, size_t max) { return strncpy_at(d, s, max, CALLER); }

static char *strcat_at(char *d, const char *s, const void *pc)
{
    GUARD(d, MC_READ, "strcat");
    GUARD(s, MC_READ, "strcat");
    size_t dn = len_of(d), n = len_of(s) + 1;
    check(d, dn + 1, MC_READ, pc, "strcat");
    check(s, n, MC_READ, pc, "strcat");
    check(d + dn, n, MC_WRITE, pc, "strcat");
    overlap2(d, dn + n, s, n, pc, "strcat");
    copy(d + dn, s, n);
    return d;
}

MC_EXPORT char *strcat(char *d, const char *s) { return strcat_at(d, s, CALLER); }

static char *strncat_at(char *d, const char *s, size_t max, const void *pc)
{
    GUARD(d, MC_READ, "strncat");
    if (max) GUARD(s, MC_READ, "strncat");
    size_t dn = len_of(d), n = 0;
    while (n < max && s[n]) n++;
    check(d, dn + 1, MC_READ, pc, "strncat");
    check(s, n < max ? n + 1 : max, MC_READ, pc, "strncat");
    check(d + dn, n + 1, MC_WRITE, pc, "strncat");
    overlap2(d, dn + n + 1, s, n < max ? n + 1 : max, pc, "strncat");
    copy(d + dn, s, n);
    d[dn + n] = 0;
    return d;
}

MC_EXPORT char *strncat(char *d, const char *s, size_t max) { return strncat_at(d, s, max, CALLER); }

static int strcmp_at(const char *a, const char *b, const void *pc)
{
    GUARD(a, MC_READ, "strcmp");
    GUARD(b, MC_READ, "strcmp");
    size_t i = 0;
    while (a[i] && a[i] == b[i]) i++;
    check2(a, i + 1, b, i + 1, MC_READ, pc, "strcmp");
    return (unsigned char)a[i] - (unsigned char)b[i];
}

MC_EXPORT int strcmp(const char *a, const char *b) { return strcmp_at(a, b, CALLER); }

static int strncmp_at(const char *a, const char *b, size_t max, const void *pc)
{
    if (max) { GUARD(a, MC_READ, "strncmp"); GUARD(b, MC_READ, "strncmp"); }
    size_t i = 0;
    while (i < max && a[i] && a[i] == b[i]) i++;
    size_t n = i < max ? i + 1 : max;
    check2(a, n, b, n, MC_READ, pc, "strncmp");
    return i < max ? (unsigned char)a[i] - (unsigned char)b[i] : 0;
}

MC_EXPORT int strncmp(const char *a, const char *b, size_t max) { return strncmp_at(a, b, max, CALLER); }

static char *strchr_at(const char *s, int c, const void *pc)
{
    GUARD(s, MC_READ, "strchr");
    size_t i = 0;
    while (s[i] && s[i] != (char)c) i++;
    check(s, i + 1, MC_READ, pc, "strchr");
    return s[i] == (char)c ? (char *)s + i : NULL;
}

MC_EXPORT char *strchr(const char *s, int c) { return strchr_at(s, c, CALLER); }

static char *strrchr_at(const char *s, int c, const void *pc)
{
    GUARD(s, MC_READ, "strrchr");
    size_t n = len_of(s);
    check(s, n + 1, MC_READ, pc, "strrchr");
    if (real.strrchr) return real.strrchr(s, c);
    for (size_t i = n + 1; i-- > 0;) if (s[i] == (char)c) return (char *)s + i;
    return NULL;
}

MC_EXPORT char *strrchr(const char *s, int c) { return strrchr_at(s, c, CALLER); }

void *mc_malloc_at(size_t n, const void *pc);

static char *strdup_at(const char *s, const void *pc)
{
    GUARD(s, MC_READ, "strdup");
    size_t n = len_of(s) + 1;
    check(s, n, MC_READ, pc, "strdup");
    char *d = mc_malloc_at(n, pc);
    if (d) copy(d, s, n);
    return d;
}

MC_EXPORT char *strdup(const char *s) { return strdup_at(s, CALLER); }

static char *strndup_at(const char *s, size_t max, const void *pc)
{
    if (max) GUARD(s, MC_READ, "strndup");
    size_t n = 0;
    while (n < max && s[n]) n++;
    check(s, n < max ? n + 1 : max, MC_READ, pc, "strndup");
    char *d = mc_malloc_at(n + 1, pc);
    if (d) { copy(d, s, n); d[n] = 0; }
    return d;
}

MC_EXPORT char *strndup(const char *s, size_t max) { return strndup_at(s, max, CALLER); }

/* ---- _FORTIFY_SOURCE: the _chk forms gcc calls where it knows the destination's size (dl) ----
 * Checked as their plain forms, and reported by those names (they are what the program wrote); then, as
 * glibc's own _chk functions do, a length over dl fails (mc_fortify_fail). */

MC_EXPORT void *__memcpy_chk(void *d, const void *s, size_t n, size_t dl)
{
    if (n > dl) mc_fortify_fail(d, n, dl, CALLER, "memcpy");
    return memcpy_at(d, s, n, CALLER);
}

MC_EXPORT void *__memmove_chk(void *d, const void *s, size_t n, size_t dl)
{
    if (n > dl) mc_fortify_fail(d, n, dl, CALLER, "memmove");
    return memmove_at(d, s, n, CALLER);
}

MC_EXPORT void *__mempcpy_chk(void *d, const void *s, size_t n, size_t dl)
{
    if (n > dl) mc_fortify_fail(d, n, dl, CALLER, "mempcpy");
    return (char *)memcpy_at(d, s, n, CALLER) + n;
}

MC_EXPORT void *__memset_chk(void *d, int c, size_t n, size_t dl)
{
    if (n > dl) mc_fortify_fail(d, n, dl, CALLER, "memset");
    return memset_at(d, c, n, CALLER);
}

/* the string forms: the source is checked first (its over-read is the error when there is one) */
static size_t source_len(const char *s, size_t max, int limited, const void *pc, const char *fn)
{
    size_t n = 0;
    while ((!limited || n < max) && s[n]) n++;
    check(s, limited && n == max ? n : n + 1, MC_READ, pc, fn);
    return n;
}

MC_EXPORT char *__strcpy_chk(char *d, const char *s, size_t dl)
{
    const void *pc = CALLER;
    GUARD(s, MC_READ, "strcpy");
    size_t n = source_len(s, 0, 0, pc, "strcpy") + 1;
    if (n > dl) mc_fortify_fail(d, n, dl, pc, "strcpy");
    return strcpy_at(d, s, pc);
}

MC_EXPORT char *__stpcpy_chk(char *d, const char *s, size_t dl)
{
    const void *pc = CALLER;
    GUARD(s, MC_READ, "stpcpy");
    size_t n = source_len(s, 0, 0, pc, "stpcpy") + 1;
    if (n > dl) mc_fortify_fail(d, n, dl, pc, "stpcpy");
    return stpcpy_at(d, s, pc);
}

MC_EXPORT char *__strncpy_chk(char *d, const char *s, size_t max, size_t dl)
{
    if (max > dl) mc_fortify_fail(d, max, dl, CALLER, "strncpy");
    return strncpy_at(d, s, max, CALLER);
}

MC_EXPORT char *__strcat_chk(char *d, const char *s, size_t dl)
{
    const void *pc = CALLER;
    GUARD(d, MC_READ, "strcat");
    GUARD(s, MC_READ, "strcat");
    size_t dn = source_len(d, 0, 0, pc, "strcat"), n = source_len(s, 0, 0, pc, "strcat") + 1;
    if (dn + n > dl) mc_fortify_fail(d, dn + n, dl, pc, "strcat");
    return strcat_at(d, s, pc);
}

MC_EXPORT char *__strncat_chk(char *d, const char *s, size_t max, size_t dl)
{
    const void *pc = CALLER;
    GUARD(d, MC_READ, "strncat");
    if (max) GUARD(s, MC_READ, "strncat");
    size_t dn = source_len(d, 0, 0, pc, "strncat"), n = source_len(s, max, 1, pc, "strncat");
    if (dn + n + 1 > dl) mc_fortify_fail(d, dn + n + 1, dl, pc, "strncat");
    return strncat_at(d, s, max, pc);
}

/* A _chk length over the size gcc knows (dl): an overflow of the object when the shadow says so (reported as the
 * plain function's); else the bytes are all inside one object but past what gcc knew the destination to be, a
 * member of a struct (the string and printf functions get __builtin_object_size type 1 from glibc's headers):
 * an intra-object overflow; on the stack of a rewrite run (no redzones there) a stack overflow unless DWARF
 * knows a variable that holds the bytes (mc_fortify_stack). In continue mode the call then goes on (it writes inside the object). n <= dl (a
 * size argument over dl, but an output that fits) is glibc's own verdict, "*** buffer overflow detected ***". */
void mc_fortify_fail(void *d, size_t n, size_t dl, const void *pc, const char *fn)
{
    if (n > dl) {
        mc_init();
        if (mc_first_bad((uintptr_t)d, n)) check(d, n, MC_WRITE, pc, fn);
        else if (!mc_fortify_stack((uintptr_t)d, n, dl, pc, fn)) mc_report_field((uintptr_t)d, n, dl, pc, fn);
        return;
    }
    static void (*chk_fail)(void);
    if (!chk_fail) chk_fail = (void (*)(void))dlsym(RTLD_NEXT, "__chk_fail");
    if (chk_fail) chk_fail();
    __builtin_trap();
}
