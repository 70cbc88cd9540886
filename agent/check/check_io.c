/*
 * check_io.c: libc's input functions, checked by what they wrote into the program's buffer: read, pread,
 * recv and recvfrom (the kernel's writes, which no instrumented store makes), fread and fgets (libc's own
 * copies, which no wrapper of memcpy sees). After the call, the bytes it wrote are checked against the shadow
 * as one write of the function ("written 48 bytes by read"): read's result, fread's result times the element
 * size, fgets's string and its terminator. Their _FORTIFY_SOURCE forms (__read_chk __pread_chk __recv_chk
 * __recvfrom_chk __fread_chk __fgets_chk) are checked as the plain ones, and, as glibc's own _chk functions
 * do, a length over the size gcc knew fails before the call (mc_fortify_fail: an overflow if the shadow says
 * so, else glibc's "buffer overflow detected").
 * What it gets wrong: the check is made after the call, as AddressSanitizer's interceptors make it, so the
 * bytes past the buffer are written before the report (the first report stops the program; in continue mode
 * the write stays, as it did natively); a size argument larger than the buffer is not an error until the data
 * read overruns it; readv, recvmsg, getline's own buffer growth (its malloc is the checked one), scanf's %s and
 * gets are not checked here.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "check.h"

static struct {
    ssize_t (*read)(int, void *, size_t);
    ssize_t (*pread)(int, void *, size_t, off_t);
    ssize_t (*recv)(int, void *, size_t, int);
    ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
    size_t (*fread)(void *, size_t, size_t, FILE *);
    char *(*fgets)(char *, int, FILE *);
} real;

__attribute__((constructor(102))) static void resolve(void)
{
#define R(f) real.f = (typeof(real.f))dlsym(RTLD_NEXT, #f)
    R(read); R(pread); R(recv); R(recvfrom); R(fread); R(fgets);
#undef R
}

#define CALLER __builtin_return_address(0)

/* the n bytes at p the call wrote */
static void wrote(const void *p, size_t n, const void *pc, const char *fn)
{
    if (!n) return;
    mc_init();
    mc_count_libc();
    if (mc_first_bad((uintptr_t)p, n)) mc_report_access((uintptr_t)p, n, MC_WRITE, pc, fn);
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

static char *fgets_at(char *s, int n, FILE *f, const void *pc)
{
    if (!real.fgets) resolve();
    char *r = real.fgets(s, n, f);
    if (r) {
        size_t len = 0;   /* what it wrote: the line read and its terminator, within n */
        while (len + 1 < (size_t)n && s[len]) len++;
        wrote(s, len + 1, pc, "fgets");
    }
    return r;
}

MC_EXPORT char *fgets(char *s, int n, FILE *f) { return fgets_at(s, n, f, CALLER); }
MC_EXPORT char *(fgets_unlocked)(char *s, int n, FILE *f) { return fgets_at(s, n, f, CALLER); }

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

MC_EXPORT char *__fgets_chk(char *s, size_t dl, int n, FILE *f)
{
    if (n > 0 && (size_t)n > dl) mc_fortify_fail(s, (size_t)n, dl, CALLER, "fgets");
    return fgets_at(s, n, f, CALLER);
}

MC_EXPORT char *__fgets_unlocked_chk(char *s, size_t dl, int n, FILE *f)
{
    if (n > 0 && (size_t)n > dl) mc_fortify_fail(s, (size_t)n, dl, CALLER, "fgets");
    return fgets_at(s, n, f, CALLER);
}
