/*
 * rt_fd.c: the descriptor libmemtrace-rt.so writes its trace on, kept out of the program's way
 * (docs/compiled-in.md, "The trace's descriptor").
 *
 * The trace file is opened once, then moved (F_DUPFD_CLOEXEC) to the highest number the program may open
 * below min(RLIMIT_NOFILE, 1024), where a program that opens files lowest-first (as the kernel numbers them)
 * reaches it last. The file's identity (device, inode) is kept: before every write the writer asks the kernel
 * what the descriptor is now (rt_fd_get); if the program closed it, or put a file of its own on that number,
 * the trace file is opened again by its absolute path, for appending (never truncated), and the program's
 * file is left alone. The library calls that would take it from the runtime are wrapped, as Valgrind
 * protects its own descriptors:
 *
 *     close(fd)                   -> -1 EBADF, as untraced (the number is not the program's)
 *     close_range, closefrom      -> the same call around it (the range split in two)
 *     dup2, dup3 onto it          -> the trace moves to another high number first, then the call is made
 *
 * Output: none of its own; the writer's chunks land in the trace file and nowhere else.
 *
 * What it gets wrong: a program that opens files until EMFILE gets one fewer than untraced (the trace holds
 * one), and a program that opens a descriptor at an explicit number (fcntl F_DUPFD at its exact number) may
 * find the next one taken. A raw close system call (no libc wrapper) followed by a new file on that number
 * costs the reopening, not a lost chunk; a raw dup2 onto the number at the very moment a chunk is written
 * may put that chunk in the program's file (the identity is checked just before the write, not atomically
 * with it). A trace file removed or renamed by the program while its descriptor is lost cannot be reopened:
 * the chunks after that are lost and the runtime says so once on standard error.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "rt.h"

static struct {
    volatile int fd;            /* -1: no trace file */
    uint64_t dev, ino;
    const char *path;           /* absolute (rt_init.c makes it so) */
    rt_lock lock;               /* a write against a move by dup2 */
    int warned;
} d = {-1, 0, 0, 0, {0}, 0};

/* The highest number below min(RLIMIT_NOFILE, 1024) that is free, fd itself if none is (or fd is there). */
static int move_high(int fd)
{
    int high = mt_dup_high(fd);
    if (high < 0) return fd;
    mt_sys1(SYS_close, fd);
    return high;
}

static int same_file(int fd)
{
    struct stat st;
    return mt_sys2(SYS_fstat, fd, (long)&st) == 0 && st.st_dev == d.dev && st.st_ino == d.ino;
}

int rt_fd_adopt(int fd, const char *path)
{
    struct stat st;
    if (mt_sys2(SYS_fstat, fd, (long)&st) != 0) return fd;
    d.dev = st.st_dev;
    d.ino = st.st_ino;
    d.path = path;
    d.fd = move_high(fd);
    return d.fd;
}

int rt_fd_get(void)
{
    if (d.fd < 0 || same_file(d.fd)) return d.fd;
    /* Lost: the number is closed, or the program's. Reopen the trace for appending; never close the number. */
    int fd = (int)mt_sys4(SYS_openat, AT_FDCWD, (long)d.path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0);
    if (fd >= 0 && !same_file(fd)) {
        mt_sys1(SYS_close, fd);
        fd = -1;
    }
    if (fd < 0) {
        if (!d.warned) {
            static const char msg[] = "memtrace: the program took the trace's descriptor and the trace file is gone; the trace stops here\n";
            mt_sys3(SYS_write, 2, (long)msg, sizeof msg - 1);
            d.warned = 1;
        }
        return -1;
    }
    d.fd = move_high(fd);
    return d.fd;
}

void rt_fd_hold(void) { rt_lock_take(&d.lock); }
void rt_fd_release(void) { rt_lock_drop(&d.lock); }

/* A fork's child opens a trace of its own: the parent's (shared with the child) is dropped by number. */
void rt_fd_drop(void)
{
    if (d.fd >= 0 && same_file(d.fd)) mt_sys1(SYS_close, d.fd);
    d.fd = -1;
}

/* ---- the wrappers ---------------------------------------------------------------------------------- */

static void *next(const char *name) { return rt_next(name); }

static int ours(int fd) { return fd >= 0 && fd == d.fd && same_file(fd); }

RT_EXPORT int close(int fd)
{
    static int (*real)(int);
    if (ours(fd)) {
        errno = EBADF;
        return -1;
    }
    if (!real) real = (int (*)(int))next("close");
    return real(fd);
}

RT_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
    static int (*real)(unsigned, unsigned, int);
    if (!real) real = (int (*)(unsigned, unsigned, int))next("close_range");
    int fd = d.fd;
    if (fd < 0 || (unsigned)fd < first || (unsigned)fd > last || !ours(fd)) return real(first, last, flags);
    int r = 0;
    if ((unsigned)fd > first) r = real(first, (unsigned)fd - 1, flags);
    if (r == 0 && (unsigned)fd < last) r = real((unsigned)fd + 1, last, flags);
    return r;
}

RT_EXPORT void closefrom(int lowfd)
{
    static void (*real)(int);
    if (!real) real = (void (*)(int))next("closefrom");
    int fd = d.fd;
    if (fd >= 0 && lowfd <= fd && ours(fd)) {
        if (lowfd < fd) close_range((unsigned)(lowfd < 0 ? 0 : lowfd), (unsigned)fd - 1, 0);
        lowfd = fd + 1;
    }
    real(lowfd);
}

/* The program wants the trace's number: the trace moves to another high one first. */
static void make_room(int target)
{
    if (!ours(target)) return;
    rt_fd_hold();
    long moved = -1;
    for (long at = target - 1; at >= 3 && moved < 0 && at >= target - 64; at--) moved = mt_sys3(SYS_fcntl, target, F_DUPFD_CLOEXEC, at);
    if (moved < 0 || moved == target) moved = mt_sys3(SYS_fcntl, target, F_DUPFD_CLOEXEC, 3);
    if (moved >= 0 && moved != target) d.fd = (int)moved;
    rt_fd_release();
}

/* The call failed: the copy left on the number goes, as the number was free for the program untraced. */
static void undo_room(int target)
{
    if (target != d.fd && same_file(target)) mt_sys1(SYS_close, target);
}

RT_EXPORT int dup2(int old, int target)
{
    static int (*real)(int, int);
    if (!real) real = (int (*)(int, int))next("dup2");
    if (old != target) make_room(target);
    int r = real(old, target);
    if (r < 0) undo_room(target);
    return r;
}

RT_EXPORT int dup3(int old, int target, int flags)
{
    static int (*real)(int, int, int);
    if (!real) real = (int (*)(int, int, int))next("dup3");
    if (old != target) make_room(target);
    int r = real(old, target, flags);
    if (r < 0) undo_room(target);
    return r;
}
