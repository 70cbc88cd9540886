/*
 * check_io.c: libc's input functions, checked by what they wrote into the program's buffer: read, pread, recv,
 * recvfrom, readv, preadv and recvmsg (the kernel's writes, which no instrumented store makes; a vector's
 * buffers each, in order, recvmsg's sender address and ancillary data too), fread, fgets, fgetws, gets,
 * getline, getdelim and the scanf family (libc's own copies, which no wrapper of memcpy sees). After the call,
 * the bytes it wrote are checked against the shadow as one write of the function ("written 48 bytes by read"):
 * read's result, fread's result times the element size, the string and its terminator of getline and getdelim, and for scanf, fscanf, sscanf, their v-forms and their __isoc99_/__isoc23_ names
 * (<stdio.h> calls those), each assigned %s and %[...]'s string and terminator, %Nc's N characters, %ls %lc %S
 * %C's wide ones ("written 49 bytes by sscanf");
 * the wide family (wscanf, fwscanf, swscanf, their v-forms and ISO names) the same way, by its format's
 * ASCII copy (a narrow %Nc there counts N bytes, exact for ASCII input).
 * Their _FORTIFY_SOURCE forms are checked as the plain ones and fail where glibc 2.36's own _chk functions fail
 * (mc_fortify_fail: an overflow if the shadow says so, else an overflow of the member gcc knew): __read_chk
 * __pread_chk __recv_chk __recvfrom_chk __fread_chk on a length over the size gcc knew, before the call;
 * __fgets_chk __fgetws_chk (and their _unlocked forms) only on a line that does not fit that size, a larger
 * size argument being no error while the lines fit; __gets_chk on a line that does not fit, before it is stored
 * (gets, __gets_chk, fgets and fgetws read the line aside and check it, with its terminator, before storing a
 * byte: "written 49 bytes by fgets" with the program's memory past the buffer untouched).
 * sscanf and swscanf (v-forms, ISO names) are run aside first into the runtime's own destinations and each range
 * checked before the real call stores (mc_scan_before, check_scan.h), but for a positional format, %m and GNU %as;
 * the stream forms (scanf fscanf wscanf fwscanf, v-forms, ISO names) make their one real call into the runtime's
 * slots (%s as glibc's %ms, its malloc served by an arena: mc_arena_now, check_heap.c) and each range is checked
 * before it is copied to the program's destination (mc_fscan_run, check_scan.h), but for what that cannot express
 * (a positional format, %m, a stream without a descriptor, ...: docs/check.md).
 * What it gets wrong: the others' check is made after the call, as
 * AddressSanitizer's interceptors make it, so the bytes
 * past the buffer are written before the report (the first report stops the program; in continue mode the write
 * stays, as it did natively); a size argument larger than the buffer is not an error until the data read
 * overruns it; a scanf format of positional arguments (%1$s) is not walked, %m's buffers are the checked
 * malloc's, and a %Nc that failed half way (input ended) wrote characters its result does not count, which go
 * unchecked. fgets and fgetws read aside: a stream whose error flag was set before the call hides an error of this
 * one (glibc clears the flag for the call), and a line cut by a read error leaves the buffer as it was, where
 * glibc's holds the part read (both return NULL).
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>
#include <wchar.h>

#include "mt_common.h"
#include "check.h"
#include "check_scan.h"

static struct {
    ssize_t (*read)(int, void *, size_t);
    ssize_t (*pread)(int, void *, size_t, off_t);
    ssize_t (*recv)(int, void *, size_t, int);
    ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
    size_t (*fread)(void *, size_t, size_t, FILE *);
    char *(*fgets)(char *, int, FILE *);
    wchar_t *(*fgetws)(wchar_t *, int, FILE *);
    ssize_t (*getdelim)(char **, size_t *, int, FILE *);
    ssize_t (*readv)(int, const struct iovec *, int);
    ssize_t (*preadv)(int, const struct iovec *, int, off_t);
    ssize_t (*recvmsg)(int, struct msghdr *, int);
    /* scanf's family by the name the program called: glibc's plain (GNU %a), ISO C99 and C23 (%b) forms */
    int (*vfscanf[3])(FILE *, const char *, va_list);
    int (*vsscanf[3])(const char *, const char *, va_list);
} real;

__attribute__((constructor(102))) static void resolve(void)
{
#define R(f) real.f = (typeof(real.f))dlsym(RTLD_NEXT, #f)
    R(read); R(pread); R(recv); R(recvfrom); R(fread); R(fgets); R(fgetws); R(getdelim); R(readv); R(preadv); R(recvmsg);
#undef R
    real.vfscanf[0] = (typeof(real.vfscanf[0]))dlsym(RTLD_NEXT, "vfscanf");
    real.vsscanf[0] = (typeof(real.vsscanf[0]))dlsym(RTLD_NEXT, "vsscanf");
    real.vfscanf[1] = (typeof(real.vfscanf[1]))dlsym(RTLD_NEXT, "__isoc99_vfscanf");
    real.vsscanf[1] = (typeof(real.vsscanf[1]))dlsym(RTLD_NEXT, "__isoc99_vsscanf");
    /* the C23 forms (glibc 2.38) at their first call: a failed dlsym mallocs its message, which would number
     * the program's blocks differently on an older glibc */
}

#define CALLER __builtin_return_address(0)

/* the n bytes at p the call wrote */
static void wrote(const void *p, size_t n, const void *pc, const char *fn)
{
    if (!n) return;
    mc_init();
    mc_count_libc(pc);
    if (!mc_shadow_clean((uintptr_t)p, n) && mc_first_bad((uintptr_t)p, n)) mc_report_access((uintptr_t)p, n, MC_WRITE, pc, fn);
    else if (mc_rewritten) mc_check_stack_var((uintptr_t)p, n, MC_WRITE, pc, fn);
}

static ssize_t read_at(int fd, void *b, size_t n, const void *pc)
{
    ssize_t r = real.read ? real.read(fd, b, n) : syscall(SYS_read, fd, b, n);
    if (r > 0) wrote(b, (size_t)r, pc, "read");
    return r;
}

MC_EXPORT ssize_t read(int fd, void *b, size_t n) { return read_at(fd, b, n, CALLER); }

static ssize_t pread_at(int fd, void *b, size_t n, off_t off, const void *pc)
{
    ssize_t r = real.pread ? real.pread(fd, b, n, off) : syscall(SYS_pread64, fd, b, n, off);
    if (r > 0) wrote(b, (size_t)r, pc, "pread");
    return r;
}

MC_EXPORT ssize_t pread(int fd, void *b, size_t n, off_t off) { return pread_at(fd, b, n, off, CALLER); }
MC_EXPORT ssize_t pread64(int fd, void *b, size_t n, off_t off) { return pread_at(fd, b, n, off, CALLER); }

static ssize_t recvfrom_at(int fd, void *b, size_t n, int flags, struct sockaddr *from, socklen_t *fl, const void *pc,
                           const char *fn)
{
    ssize_t r = real.recvfrom ? real.recvfrom(fd, b, n, flags, from, fl) : syscall(SYS_recvfrom, fd, b, n, flags, from, fl);
    /* MSG_TRUNC on a datagram socket returns the datagram's length, more than was written */
    if (r > 0) wrote(b, (size_t)r < n ? (size_t)r : n, pc, fn);
    return r;
}

MC_EXPORT ssize_t recv(int fd, void *b, size_t n, int flags) { return recvfrom_at(fd, b, n, flags, NULL, NULL, CALLER, "recv"); }
MC_EXPORT ssize_t recvfrom(int fd, void *b, size_t n, int flags, struct sockaddr *from, socklen_t *fl)
{
    return recvfrom_at(fd, b, n, flags, from, fl, CALLER, "recvfrom");
}

static size_t fread_at(void *b, size_t size, size_t count, FILE *f, const void *pc)
{
    if (!real.fread) resolve();
    size_t r = real.fread(b, size, count, f);
    if (r) wrote(b, r * size, pc, "fread");
    return r;
}

MC_EXPORT size_t fread(void *b, size_t size, size_t count, FILE *f) { return fread_at(b, size, count, f, CALLER); }
MC_EXPORT size_t (fread_unlocked)(void *b, size_t size, size_t count, FILE *f) { return fread_at(b, size, count, f, CALLER); }

/* pages of the runtime's own for a long line (mc_read_line, fgets' read aside) */
static void *line_pages(void *old, size_t old_size, size_t size)
{
    if (!size) { mt_own_remove(old, old_size); munmap(old, old_size); return NULL; }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    mt_own_add(p, size);
    return p;
}

/* n bytes from s to d, eight at a time: not memcpy, which is the runtime's checked wrapper */
static void copy_bytes(char *d, const char *s, size_t n)
{
    for (; n >= 8; n -= 8, d += 8, s += 8) __builtin_memcpy(d, s, 8);
    for (; n; n--) *d++ = *s++;
}

/* fgets and fgetws (wide: in wchar_t characters): the line, at most n - 1 characters with its newline,
 * read aside into the runtime's memory as gets's, and its range with the terminator checked before a byte of it
 * is stored: the report comes with the program's memory past the buffer untouched. NULL as libc's: the input
 * ended before a character, or a read error. A line that no memory of the runtime holds is cut there. */
static void *fgets_aside(void *s, int n, FILE *f, int wide, const void *pc, const char *fn)
{
    size_t unit = wide ? sizeof(wchar_t) : 1, len = 0, cap = 1024 / unit;
    union { char c[1024]; wchar_t w[1024 / sizeof(wchar_t)]; } small;
    char *p = small.c;
    int mapped = 0, failed = 0;
    flockfile(f);
    int had_error = ferror(f) != 0;   /* libc's fails only on an error of this call */
    while (len + 1 < (size_t)n) {
        if (!wide && f->_IO_read_ptr < f->_IO_read_end && len + 2 < cap) {
            /* what the stream's buffer holds of the line, as much as fits, in one go: what getc_unlocked would
             * take a character at a time (its fast path reads and advances _IO_read_ptr the same way); the loop
             * of getc calls was 1 % of sqlite3's checked run reading its SQL, glibc's fgets a sixth of that */
            size_t take = (size_t)(f->_IO_read_end - f->_IO_read_ptr), room = (size_t)n - 1 - len;
            if (take > room) take = room;
            if (take > cap - 1 - len) take = cap - 1 - len;
            const char *nl = memchr(f->_IO_read_ptr, '\n', take);
            if (nl) take = (size_t)(nl - f->_IO_read_ptr) + 1;
            copy_bytes(p + len, f->_IO_read_ptr, take);
            f->_IO_read_ptr += take;
            len += take;
            if (nl) break;
            continue;
        }
        wint_t c = wide ? getwc_unlocked(f) : (wint_t)getc_unlocked(f);
        if (wide ? c == WEOF : (int)c == EOF) {
            failed = !had_error && ferror(f);
            break;
        }
        if (len + 1 >= cap) {
            char *q = line_pages(NULL, 0, 2 * cap * unit);
            if (!q) { wide ? (void)ungetwc(c, f) : (void)ungetc((int)c, f); break; }
            for (size_t i = 0; i < len * unit; i++) q[i] = p[i];
            if (mapped) line_pages(p, cap * unit, 0);
            p = q;
            cap *= 2;
            mapped = 1;
        }
        if (wide) ((wchar_t *)p)[len++] = (wchar_t)c;
        else p[len++] = (char)c;
        if (c == (wide ? L'\n' : '\n')) break;
    }
    funlockfile(f);
    void *r = NULL;
    if (n == 1 || (len && !failed)) {
        wrote(s, (len + 1) * unit, pc, fn);
        /* by hand: the runtime's memcpy would check (and report) the range again */
        copy_bytes(s, p, len * unit);
        for (size_t i = 0; i < unit; i++) ((char *)s)[len * unit + i] = 0;
        r = s;
    }
    if (mapped) line_pages(p, cap * unit, 0);
    return r;
}

static char *fgets_at(char *s, int n, FILE *f, const void *pc)
{
    if (n <= 0) {
        if (!real.fgets) resolve();
        return real.fgets(s, n, f);
    }
    return fgets_aside(s, n, f, 0, pc, "fgets");
}

MC_EXPORT char *fgets(char *s, int n, FILE *f) { return fgets_at(s, n, f, CALLER); }
MC_EXPORT char *(fgets_unlocked)(char *s, int n, FILE *f) { return fgets_at(s, n, f, CALLER); }

static wchar_t *fgetws_at(wchar_t *s, int n, FILE *f, const void *pc)
{
    if (n <= 0) {
        if (!real.fgetws) resolve();
        return real.fgetws(s, n, f);
    }
    return fgets_aside(s, n, f, 1, pc, "fgetws");
}

MC_EXPORT wchar_t *fgetws(wchar_t *s, int n, FILE *f) { return fgetws_at(s, n, f, CALLER); }
MC_EXPORT wchar_t *(fgetws_unlocked)(wchar_t *s, int n, FILE *f) { return fgetws_at(s, n, f, CALLER); }

/* gets is gone from C11's <stdio.h> but not from glibc, nor from old programs */
char *gets(char *s);
char *__gets_chk(char *s, size_t dl);

/* gets and __gets_chk (dl: the size gcc knew, else SIZE_MAX): the line is read into the runtime's memory first,
 * and its range checked before a byte of it is stored, so the report comes with the program's memory past the
 * buffer untouched, as the real __gets_chk stops at dl; a line over dl is that function's verdict
 * (mc_fortify_fail: the object's overflow, or glibc's abort). Stored when the program goes on (continue mode:
 * the whole line of gets, __gets_chk's cut to dl as its fgets_chk_at's). */
static char *gets_at(char *s, const void *pc, size_t dl)
{
    char small[1024];
    struct mc_line l = {small, 0, sizeof small, 0};
    int got = mc_read_line(stdin, &l, line_pages);
    if (got) {
        size_t n = l.len + 1;
        if (n > dl) {
            mc_fortify_fail(s, n, dl, pc, "gets");
            n = dl;
            l.p[n - 1] = 0;
        } else {
            wrote(s, n, pc, "gets");
        }
        for (size_t i = 0; i < n; i++) s[i] = l.p[i];
    }
    mc_line_done(&l, line_pages);
    return got ? s : NULL;
}

MC_EXPORT char *gets(char *s) { return gets_at(s, CALLER, SIZE_MAX); }

/* getline and getdelim: the line and its terminator at *line, which they grow by the checked realloc when *n is
 * too small; a *n larger than the block (the program's own count, wrong) lets them write past it */
ssize_t __getdelim(char **line, size_t *n, int delim, FILE *f);

static ssize_t getdelim_at(char **line, size_t *n, int delim, FILE *f, const void *pc, const char *fn)
{
    if (!real.getdelim) resolve();
    ssize_t r = real.getdelim(line, n, delim, f);
    if (r >= 0) wrote(*line, (size_t)r + 1, pc, fn);
    return r;
}

MC_EXPORT ssize_t getline(char **line, size_t *n, FILE *f) { return getdelim_at(line, n, '\n', f, CALLER, "getline"); }
MC_EXPORT ssize_t getdelim(char **line, size_t *n, int d, FILE *f) { return getdelim_at(line, n, d, f, CALLER, "getdelim"); }
/* what <stdio.h>'s inline getline calls (gcc -O1 and up): named getline, the program's call */
MC_EXPORT ssize_t __getdelim(char **line, size_t *n, int d, FILE *f) { return getdelim_at(line, n, d, f, CALLER, "getline"); }

/* ---- readv, preadv, recvmsg: the r bytes the kernel wrote fill the vector's buffers in order ---- */

static void wrote_iov(const struct iovec *iov, long cnt, size_t r, const void *pc, const char *fn)
{
    for (long i = 0; i < cnt && r; i++) {
        size_t k = iov[i].iov_len < r ? iov[i].iov_len : r;
        wrote(iov[i].iov_base, k, pc, fn);
        r -= k;
    }
}

static ssize_t preadv_at(int fd, const struct iovec *iov, int cnt, off_t off, int at, const void *pc)
{
    if (!real.readv) resolve();
    ssize_t r = at ? real.preadv(fd, iov, cnt, off) : real.readv(fd, iov, cnt);
    if (r > 0) wrote_iov(iov, cnt, (size_t)r, pc, at ? "preadv" : "readv");
    return r;
}

MC_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt) { return preadv_at(fd, iov, cnt, 0, 0, CALLER); }
MC_EXPORT ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off) { return preadv_at(fd, iov, cnt, off, 1, CALLER); }
MC_EXPORT ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off_t off) { return preadv_at(fd, iov, cnt, off, 1, CALLER); }

/* the data (r bytes, at most the vector's: MSG_TRUNC returns a datagram's length), the sender's address (the
 * kernel returns its full length, writes at most the length given) and the ancillary data (msg_controllen) */
MC_EXPORT ssize_t recvmsg(int fd, struct msghdr *m, int flags)
{
    if (!real.recvmsg) resolve();
    const void *pc = CALLER;
    socklen_t namelen = m->msg_name ? m->msg_namelen : 0;
    size_t controllen = m->msg_control ? m->msg_controllen : 0;
    ssize_t r = real.recvmsg(fd, m, flags);
    if (r < 0) return r;
    wrote_iov(m->msg_iov, (long)m->msg_iovlen, (size_t)r, pc, "recvmsg");
    if (namelen) wrote(m->msg_name, m->msg_namelen < namelen ? m->msg_namelen : namelen, pc, "recvmsg");
    if (controllen) wrote(m->msg_control, m->msg_controllen < controllen ? m->msg_controllen : controllen, pc, "recvmsg");
    return r;
}

/* ---- scanf's family: a stream form's one call into the runtime's slots, sscanf's run aside, else after the
 * call what each assigned conversion stored (check_scan.h) ---- */

/* a stream call made into the runtime's slots: each range checked, then stored; its result */
static int fscanned(struct mc_fscan *st, const void *pc, const char *fn)
{
    for (int k = 0; k < st->args; k++) wrote(st->dest[k], mc_fscan_range(st, k), pc, fn);
    mc_fscan_store(st);
    return st->r;
}

static int vfscanf_at(FILE *in, const char *s, int form, const char *fmt, va_list ap, const void *pc, const char *fn)
{
    if (!real.vfscanf[0]) resolve();
    if (form == 2 && !real.vfscanf[2]) {   /* only a program built against glibc 2.38 or later calls them */
        real.vsscanf[2] = (typeof(real.vsscanf[2]))dlsym(RTLD_NEXT, "__isoc23_vsscanf");
        real.vfscanf[2] = (typeof(real.vfscanf[2]))dlsym(RTLD_NEXT, "__isoc23_vfscanf");
        if (!real.vfscanf[2] || !real.vsscanf[2]) real.vfscanf[2] = real.vfscanf[1], real.vsscanf[2] = real.vsscanf[1];
    }
    /* fscanf: the one real call into the runtime's slots, each range checked before it is copied (check_scan.h) */
    struct mc_fscan st;
    if (in && mc_fscan_run(&st, real.vfscanf[form], NULL, in, fmt, form == 0, ap, line_pages, &mc_arena_now))
        return fscanned(&st, pc, fn);
    /* sscanf: run aside first, each destination checked before the real call stores (check_scan.h) */
    char scratch[2048] __attribute__((aligned(16)));
    if (!in && fmt && s && mc_scan_before(real.vsscanf[form], NULL, s, fmt, form == 0, ap, scratch, sizeof scratch,
                                          line_pages, pc, fn, wrote))
        return real.vsscanf[form](s, fmt, ap);
    va_list walk;
    va_copy(walk, ap);
    int r = in ? real.vfscanf[form](in, fmt, ap) : real.vsscanf[form](s, fmt, ap);
    if (r > 0) mc_scanned(fmt, walk, r, pc, fn, wrote);
    va_end(walk);
    return r;
}

/* each name of the family, in each form (check_scan.h) */
MC_SCANF_ENTRY_POINTS(MC_EXPORT, vfscanf_at, "", gnu, 0)
MC_SCANF_ENTRY_POINTS(MC_EXPORT, vfscanf_at, "__isoc99_", c99, 1)
MC_SCANF_ENTRY_POINTS(MC_EXPORT, vfscanf_at, "__isoc23_", c23, 2)

/* ---- the wide scanf family (wscanf fwscanf swscanf, v-forms, __isoc99_/__isoc23_ names): the format is wide,
 * the conversions are scanf's (%s a multibyte string into a char array, %ls a wide one), walked as its ASCII
 * copy (check_scan.h) ---- */

static int (*real_vfwscanf[3])(FILE *, const wchar_t *, va_list);
static int (*real_vswscanf[3])(const wchar_t *, const wchar_t *, va_list);

static int vfwscanf_at(FILE *in, const wchar_t *s, int form, const wchar_t *fmt, va_list ap, const void *pc, const char *fn)
{
    static const char *const pre[3] = {"", "__isoc99_", "__isoc23_"};
    if (!real_vfwscanf[form]) {   /* at the first call, as the C23 narrow forms, and the same fallback */
        char name[32];
        snprintf(name, sizeof name, "%svfwscanf", pre[form]);
        real_vfwscanf[form] = (typeof(real_vfwscanf[0]))dlsym(RTLD_NEXT, name);
        snprintf(name, sizeof name, "%svswscanf", pre[form]);
        real_vswscanf[form] = (typeof(real_vswscanf[0]))dlsym(RTLD_NEXT, name);
        if (form && (!real_vfwscanf[form] || !real_vswscanf[form])) {
            real_vfwscanf[form] = (typeof(real_vfwscanf[0]))dlsym(RTLD_NEXT, "vfwscanf");
            real_vswscanf[form] = (typeof(real_vswscanf[0]))dlsym(RTLD_NEXT, "vswscanf");
        }
    }
    struct mc_fscan st;
    if (in && mc_fscan_run(&st, NULL, real_vfwscanf[form], in, fmt, form == 0, ap, line_pages, &mc_arena_now))
        return fscanned(&st, pc, fn);
    char scratch[2048] __attribute__((aligned(16)));
    if (!in && fmt && s && mc_scan_before(NULL, real_vswscanf[form], s, fmt, form == 0, ap, scratch, sizeof scratch,
                                          line_pages, pc, fn, wrote))
        return real_vswscanf[form](s, fmt, ap);
    va_list walk;
    va_copy(walk, ap);
    int r = in ? real_vfwscanf[form](in, fmt, ap) : real_vswscanf[form](s, fmt, ap);
    if (r > 0 && fmt) mc_wscanned(fmt, walk, r, pc, fn, wrote);
    va_end(walk);
    return r;
}


MC_WSCANF_ENTRY_POINTS(MC_EXPORT, vfwscanf_at, "", wgnu, 0)
MC_WSCANF_ENTRY_POINTS(MC_EXPORT, vfwscanf_at, "__isoc99_", wc99, 1)
MC_WSCANF_ENTRY_POINTS(MC_EXPORT, vfwscanf_at, "__isoc23_", wc23, 2)

/* ---- _FORTIFY_SOURCE forms: dl is the buffer's size as gcc knew it ---- */

MC_EXPORT ssize_t __read_chk(int fd, void *b, size_t n, size_t dl)
{
    if (n > dl) mc_fortify_fail(b, n, dl, CALLER, "read");
    return read_at(fd, b, n, CALLER);
}

MC_EXPORT ssize_t __pread_chk(int fd, void *b, size_t n, off_t off, size_t dl)
{
    if (n > dl) mc_fortify_fail(b, n, dl, CALLER, "pread");
    return pread_at(fd, b, n, off, CALLER);
}

MC_EXPORT ssize_t __pread64_chk(int fd, void *b, size_t n, off_t off, size_t dl)
{
    if (n > dl) mc_fortify_fail(b, n, dl, CALLER, "pread");
    return pread_at(fd, b, n, off, CALLER);
}

MC_EXPORT ssize_t __recv_chk(int fd, void *b, size_t n, size_t dl, int flags)
{
    if (n > dl) mc_fortify_fail(b, n, dl, CALLER, "recv");
    return recvfrom_at(fd, b, n, flags, NULL, NULL, CALLER, "recv");
}

MC_EXPORT ssize_t __recvfrom_chk(int fd, void *b, size_t n, size_t dl, int flags, struct sockaddr *from, socklen_t *fl)
{
    if (n > dl) mc_fortify_fail(b, n, dl, CALLER, "recvfrom");
    return recvfrom_at(fd, b, n, flags, from, fl, CALLER, "recvfrom");
}

MC_EXPORT size_t __fread_chk(void *b, size_t dl, size_t size, size_t count, FILE *f)
{
    if (size && count > dl / size) mc_fortify_fail(b, size * count, dl, CALLER, "fread");
    return fread_at(b, size, count, f, CALLER);
}

MC_EXPORT size_t __fread_unlocked_chk(void *b, size_t dl, size_t size, size_t count, FILE *f)
{
    if (size && count > dl / size) mc_fortify_fail(b, size * count, dl, CALLER, "fread");
    return fread_at(b, size, count, f, CALLER);
}

/* fgets's and fgetws's: glibc 2.36's reads at most min(n - 1, dl) characters and fails only when it read dl of them
 * (the terminator would not fit), so a size n over dl is no error while the lines fit. The same here without
 * writing past the buffer: at most dl - 1 characters are read into it; when they fill it without a newline, the
 * next character decides (the end of the input: the line fits); a line that does not fit is read on, uncopied,
 * as far as the plain call would have read it (n - 1 characters or its newline), and reported as the plain
 * call's write of that line and its terminator (mc_fortify_fail). In continue mode the program goes on with the
 * line cut to the buffer, the stream where the plain call would have left it. */
static char *fgets_chk_at(char *s, size_t dl, int n, FILE *f, const void *pc, const char *fn)
{
    if (n <= 1 || dl == 0) return NULL;                        /* glibc's reads nothing and returns NULL */
    if ((size_t)n <= dl) return fgets_at(s, n, f, pc);         /* it cannot write past dl */
    if (!real.fgets) resolve();
    size_t len = 0;
    if (dl > 1) {
        if (!real.fgets(s, (int)(dl < INT_MAX ? dl : INT_MAX), f)) return NULL;
        while (len + 1 < dl && s[len]) len++;
        if (len + 1 < dl || s[len - 1] == '\n') {   /* the line ended inside the buffer */
            wrote(s, len + 1, pc, fn);
            return s;
        }
    }
    int c = getc(f);
    if (c == EOF) {   /* the input ended with the buffer full but for its terminator: it fits */
        if (!len) return NULL;
        wrote(s, len + 1, pc, fn);
        return s;
    }
    if (!len) s[0] = 0;
    size_t got = len + 1;   /* the plain call's characters read so far */
    while (c != '\n' && got < (size_t)n - 1 && (c = getc(f)) != EOF) got++;
    mc_fortify_fail(s, got + 1, dl, pc, fn);
    return s;
}

MC_EXPORT char *__fgets_chk(char *s, size_t dl, int n, FILE *f) { return fgets_chk_at(s, dl, n, f, CALLER, "fgets"); }
MC_EXPORT char *__fgets_unlocked_chk(char *s, size_t dl, int n, FILE *f) { return fgets_chk_at(s, dl, n, f, CALLER, "fgets"); }

/* the same in wide characters (dl counts them) */
static wchar_t *fgetws_chk_at(wchar_t *s, size_t dl, int n, FILE *f, const void *pc)
{
    if (n <= 1 || dl == 0) return NULL;
    if ((size_t)n <= dl) return fgetws_at(s, n, f, pc);
    if (!real.fgetws) resolve();
    size_t len = 0;
    if (dl > 1) {
        if (!real.fgetws(s, (int)(dl < INT_MAX ? dl : INT_MAX), f)) return NULL;
        while (len + 1 < dl && s[len]) len++;
        if (len + 1 < dl || s[len - 1] == L'\n') {
            wrote(s, (len + 1) * sizeof(wchar_t), pc, "fgetws");
            return s;
        }
    }
    wint_t c = getwc(f);
    if (c == WEOF) {
        if (!len) return NULL;
        wrote(s, (len + 1) * sizeof(wchar_t), pc, "fgetws");
        return s;
    }
    if (!len) s[0] = 0;
    size_t got = len + 1;
    while (c != L'\n' && got < (size_t)n - 1 && (c = getwc(f)) != WEOF) got++;
    mc_fortify_fail(s, (got + 1) * sizeof(wchar_t), dl * sizeof(wchar_t), pc, "fgetws");
    return s;
}

MC_EXPORT wchar_t *__fgetws_chk(wchar_t *s, size_t dl, int n, FILE *f) { return fgetws_chk_at(s, dl, n, f, CALLER); }
MC_EXPORT wchar_t *__fgetws_unlocked_chk(wchar_t *s, size_t dl, int n, FILE *f) { return fgetws_chk_at(s, dl, n, f, CALLER); }

/* glibc's reads at most dl - 1 characters and fails on a longer line: here the line is read aside and checked first */
MC_EXPORT char *__gets_chk(char *s, size_t dl) { return dl ? gets_at(s, CALLER, dl) : NULL; }
