/*
 * memtrace agent, system-call buffers: what each call reads and writes in user memory, in ONE table
 * (syscall_table), the spans of pages the SIGSYS handler (syscall.c) opens for it or the alias addresses the
 * kernel gets instead (describe_syscall), and the kernel's transfers recorded after the call (record_syscall).
 *
 * How its output reads: an MT_BLOCK record per buffer the kernel read (MT_BLK_FETCH, src) or wrote
 * (MT_BLK_STORE, dst), flag MT_BLK_SYSCALL, `what` the call's number, `len` up to the call's result; an iovec
 * array, msghdr or mmsghdr array gives one record per buffer it names, in order, until the result is spent.
 *
 * What it gets wrong: the records say what the kernel may have touched, up to the call's result, not byte by
 * byte; a call the table does not know that passes a pointer into traced memory opens everything (other
 * threads' accesses during it are not seen); the lengths and flags the kernel writes into a msghdr or an
 * mmsghdr's msg_len are not recorded (only the data the calls move is), nor the remote side of process_vm_*.
 */
#include "syscall.h"

/* Adds one buffer; past MAX_SPANS the call falls back to opening all traced memory (`all`). */
void add_span(struct spans *sp, uintptr_t a, size_t len)
{
    if (!a || !len) return;
    if (sp->n == MAX_SPANS) { sp->all = 1; return; }
    sp->s[sp->n] = page_down(a);
    sp->e[sp->n] = page_up(a + len);
    sp->n++;
}

static int is_traced_address(uintptr_t a)
{
    return a && set_find(a) != NULL;
}



static void emit_block(int op, long nr, uintptr_t ip, uintptr_t dst, uintptr_t src, uint64_t len)
{
    if (!g.recording || !len) return;
    REC(MT_BLOCK, struct mt_block, b);
    b.h.flags = (uint8_t)(op | MT_BLK_SYSCALL);
    b.ip = ip;
    b.dst = dst;
    b.src = src;
    b.len = len;
    b.what = (uint32_t)nr;
    emit(&b);
}

/* ------------------------------------------------------------------------------------------------ */
/* System-call buffers: what each call reads and writes in user memory, in ONE table. The SIGSYS       */
/* handler opens exactly these buffers for the time of the call and records the kernel's transfers     */
/* marked B_RECORD as block events. A call whose buffers exceed the agent's limits (more than          */
/* MAX_SPANS of them, or no memory left to note an opening), and any call not in the table           */
/* that passes a pointer into traced memory, runs with all traced memory open instead: slower, but the */
/* call does exactly what it would do untraced.                                                        */

enum buf_len {
    LEN_NONE,
    LEN_ARG,                     /* argument `n` bytes */
    LEN_FIXED,                   /* `size` bytes */
    LEN_ELEMS,                   /* argument `n` elements of `size` bytes */
    LEN_PAGES,                   /* one byte per page of the length in argument `n` (mincore's vector) */
    LEN_FDSET,                   /* an fd_set for argument `n` descriptors */
    LEN_IOV,                     /* an iovec array of argument `n` entries, and every buffer it names */
    LEN_MSGHDR,                  /* a struct msghdr: its iovecs, name and control buffers */
    LEN_MMSG,                    /* an array of argument `n` struct mmsghdr: each msghdr as LEN_MSGHDR, */
                                 /* and the msg_len the kernel writes into each message it handled */
    LEN_RIOV,                    /* an iovec array of argument `n` entries naming process argument 0's */
                                 /* buffers: ours (then as LEN_IOV, `flags` the kernel's use of them) */
                                 /* only when argument 0 is this process */
};
enum { B_IN = 1, B_OUT = 2, B_RECORD = 4 }; /* the kernel reads it / writes it / its transfer of `ret` bytes is traced */
#define PATH_BYTES 4096              /* the kernel reads a path up to PATH_MAX bytes, never further */

struct buf { uint8_t arg, len, n, flags; uint32_t size; };
struct syscall_bufs { int nr; struct buf b[4]; };
#define BUF(arg, len, n, size, flags) {arg, len, n, flags, size}
#define ARG(arg, n, fl) BUF(arg, LEN_ARG, n, 0, fl)
#define FIXED(arg, size, fl) BUF(arg, LEN_FIXED, 0, size, fl)
#define PATH(arg) FIXED(arg, PATH_BYTES, B_IN)
#define NOTHING {{0, LEN_NONE, 0, 0, 0}}

static const struct syscall_bufs syscall_table[] = {
    {SYS_read, {ARG(1, 2, B_OUT | B_RECORD)}},
    {SYS_pread64, {ARG(1, 2, B_OUT | B_RECORD)}},
    {SYS_getdents64, {ARG(1, 2, B_OUT | B_RECORD)}},
    {SYS_write, {ARG(1, 2, B_IN | B_RECORD)}},
    {SYS_pwrite64, {ARG(1, 2, B_IN | B_RECORD)}},
    {SYS_getrandom, {ARG(0, 1, B_OUT | B_RECORD)}},
    {SYS_readv, {BUF(1, LEN_IOV, 2, 0, B_OUT | B_RECORD)}},
    {SYS_preadv, {BUF(1, LEN_IOV, 2, 0, B_OUT | B_RECORD)}},
    {SYS_preadv2, {BUF(1, LEN_IOV, 2, 0, B_OUT | B_RECORD)}},
    {SYS_writev, {BUF(1, LEN_IOV, 2, 0, B_IN | B_RECORD)}},
    {SYS_pwritev, {BUF(1, LEN_IOV, 2, 0, B_IN | B_RECORD)}},
    {SYS_pwritev2, {BUF(1, LEN_IOV, 2, 0, B_IN | B_RECORD)}},
    {SYS_recvfrom, {ARG(1, 2, B_OUT | B_RECORD), FIXED(4, 128, B_OUT), FIXED(5, 4, B_IN | B_OUT)}},
    {SYS_sendto, {ARG(1, 2, B_IN | B_RECORD), ARG(4, 5, B_IN)}},
    {SYS_recvmsg, {BUF(1, LEN_MSGHDR, 0, 0, B_OUT | B_RECORD)}},
    {SYS_sendmsg, {BUF(1, LEN_MSGHDR, 0, 0, B_IN | B_RECORD)}},
    {SYS_recvmmsg, {BUF(1, LEN_MMSG, 2, 0, B_OUT | B_RECORD), FIXED(4, 16, B_IN | B_OUT)}},
    {SYS_sendmmsg, {BUF(1, LEN_MMSG, 2, 0, B_IN | B_RECORD)}},
    {SYS_process_vm_readv, {BUF(1, LEN_IOV, 2, 0, B_OUT | B_RECORD), BUF(3, LEN_RIOV, 4, 0, B_IN)}},
    {SYS_process_vm_writev, {BUF(1, LEN_IOV, 2, 0, B_IN | B_RECORD), BUF(3, LEN_RIOV, 4, 0, B_OUT)}},
    {SYS_poll, {BUF(0, LEN_ELEMS, 1, 8, B_IN | B_OUT)}},
    {SYS_ppoll, {BUF(0, LEN_ELEMS, 1, 8, B_IN | B_OUT), FIXED(2, 16, B_IN | B_OUT), ARG(3, 4, B_IN)}},
    {SYS_select, {BUF(1, LEN_FDSET, 0, 0, B_IN | B_OUT), BUF(2, LEN_FDSET, 0, 0, B_IN | B_OUT),
                  BUF(3, LEN_FDSET, 0, 0, B_IN | B_OUT), FIXED(4, 16, B_IN | B_OUT)}},
    {SYS_pselect6, {BUF(1, LEN_FDSET, 0, 0, B_IN | B_OUT), BUF(2, LEN_FDSET, 0, 0, B_IN | B_OUT),
                    BUF(3, LEN_FDSET, 0, 0, B_IN | B_OUT), FIXED(4, 16, B_IN | B_OUT)}},
    {SYS_epoll_wait, {BUF(1, LEN_ELEMS, 2, 12, B_OUT)}},
    {SYS_epoll_pwait, {BUF(1, LEN_ELEMS, 2, 12, B_OUT), ARG(4, 5, B_IN)}},
    {SYS_epoll_ctl, {FIXED(3, 12, B_IN)}},
    {SYS_mincore, {BUF(2, LEN_PAGES, 1, 0, B_OUT)}},
    {SYS_futex, {FIXED(0, 4, B_IN | B_OUT), FIXED(3, 16, B_IN), FIXED(4, 4, B_IN | B_OUT)}},
    {SYS_fstat, {FIXED(1, 144, B_OUT)}},
    {SYS_stat, {PATH(0), FIXED(1, 144, B_OUT)}},
    {SYS_lstat, {PATH(0), FIXED(1, 144, B_OUT)}},
    {SYS_newfstatat, {PATH(1), FIXED(2, 144, B_OUT)}},
    {SYS_statx, {PATH(1), FIXED(4, 256, B_OUT)}},
    {SYS_open, {PATH(0)}},
    {SYS_openat, {PATH(1)}},
    {SYS_access, {PATH(0)}},
    {SYS_faccessat, {PATH(1)}},
    {SYS_faccessat2, {PATH(1)}},
    {SYS_unlink, {PATH(0)}},
    {SYS_unlinkat, {PATH(1)}},
    {SYS_mkdir, {PATH(0)}},
    {SYS_chdir, {PATH(0)}},
    {SYS_rename, {PATH(0), PATH(1)}},
    {SYS_readlink, {PATH(0), ARG(1, 2, B_OUT)}},
    {SYS_readlinkat, {PATH(1), ARG(2, 3, B_OUT)}},
    {SYS_getcwd, {ARG(0, 1, B_OUT)}},
    {SYS_uname, {FIXED(0, 390, B_OUT)}},
    {SYS_sysinfo, {FIXED(0, 112, B_OUT)}},
    {SYS_times, {FIXED(0, 32, B_OUT)}},
    {SYS_getrusage, {FIXED(1, 144, B_OUT)}},
    {SYS_clock_gettime, {FIXED(1, 16, B_OUT)}},
    {SYS_clock_getres, {FIXED(1, 16, B_OUT)}},
    {SYS_gettimeofday, {FIXED(0, 16, B_OUT), FIXED(1, 8, B_OUT)}},
    {SYS_time, {FIXED(0, 8, B_OUT)}},
    {SYS_nanosleep, {FIXED(0, 16, B_IN), FIXED(1, 16, B_OUT)}},
    {SYS_clock_nanosleep, {FIXED(2, 16, B_IN), FIXED(3, 16, B_OUT)}},
    {SYS_pipe, {FIXED(0, 8, B_OUT)}},
    {SYS_pipe2, {FIXED(0, 8, B_OUT)}},
    {SYS_socketpair, {FIXED(3, 8, B_OUT)}},
    {SYS_connect, {ARG(1, 2, B_IN)}},
    {SYS_bind, {ARG(1, 2, B_IN)}},
    {SYS_accept, {FIXED(1, 128, B_OUT), FIXED(2, 4, B_IN | B_OUT)}},
    {SYS_accept4, {FIXED(1, 128, B_OUT), FIXED(2, 4, B_IN | B_OUT)}},
    {SYS_getsockname, {FIXED(1, 128, B_OUT), FIXED(2, 4, B_IN | B_OUT)}},
    {SYS_getpeername, {FIXED(1, 128, B_OUT), FIXED(2, 4, B_IN | B_OUT)}},
    {SYS_setsockopt, {ARG(3, 4, B_IN)}},
    {SYS_wait4, {FIXED(1, 4, B_OUT), FIXED(3, 144, B_OUT)}},
    {SYS_waitid, {FIXED(2, 128, B_OUT), FIXED(4, 144, B_OUT)}},
    {SYS_getrlimit, {FIXED(1, 16, B_OUT)}},
    {SYS_setrlimit, {FIXED(1, 16, B_IN)}},
    {SYS_prlimit64, {FIXED(2, 16, B_IN), FIXED(3, 16, B_OUT)}},
    {SYS_sched_getaffinity, {ARG(2, 1, B_OUT)}},
    {SYS_sched_setaffinity, {ARG(2, 1, B_IN)}},
    {SYS_rt_sigaction, {FIXED(1, 32, B_IN), FIXED(2, 32, B_OUT)}},
    {SYS_rt_sigprocmask, {FIXED(1, 8, B_IN), FIXED(2, 8, B_OUT)}},
    {SYS_sigaltstack, {FIXED(0, 24, B_IN), FIXED(1, 24, B_OUT)}},
    {SYS_set_robust_list, {FIXED(0, 24, B_IN)}},
    {SYS_rseq, {FIXED(0, 32, B_IN | B_OUT)}},
    {SYS_arch_prctl, {FIXED(1, 8, B_OUT)}},
    {SYS_clone3, {ARG(0, 1, B_IN)}},
    /* Arguments that are addresses of mappings or plain numbers, never buffers. */
    {SYS_mmap, NOTHING}, {SYS_munmap, NOTHING}, {SYS_mprotect, NOTHING}, {SYS_mremap, NOTHING},
    {SYS_madvise, NOTHING}, {SYS_brk, NOTHING}, {SYS_msync, NOTHING}, {SYS_mlock, NOTHING},
    {SYS_munlock, NOTHING}, {SYS_pkey_mprotect, NOTHING}, {SYS_exit, NOTHING}, {SYS_exit_group, NOTHING},
    {SYS_close, NOTHING}, {SYS_lseek, NOTHING}, {SYS_dup, NOTHING}, {SYS_dup2, NOTHING}, {SYS_dup3, NOTHING},
    {SYS_fcntl, NOTHING}, {SYS_getpid, NOTHING}, {SYS_gettid, NOTHING}, {SYS_getppid, NOTHING},
    {SYS_tgkill, NOTHING}, {SYS_kill, NOTHING}, {SYS_sched_yield, NOTHING}, {SYS_set_tid_address, NOTHING},
    {SYS_getuid, NOTHING}, {SYS_geteuid, NOTHING}, {SYS_getgid, NOTHING}, {SYS_getegid, NOTHING},
    {SYS_ftruncate, NOTHING}, {SYS_fsync, NOTHING}, {SYS_socket, NOTHING}, {SYS_listen, NOTHING},
    {SYS_shutdown, NOTHING}, {SYS_epoll_create1, NOTHING}, {SYS_eventfd2, NOTHING}, {SYS_prctl, NOTHING},
};

static const struct syscall_bufs *syscall_bufs_of(long nr)
{
    for (size_t i = 0; i < sizeof syscall_table / sizeof syscall_table[0]; i++)
        if (syscall_table[i].nr == nr) return &syscall_table[i];
    return NULL;
}

/* The iovec array at `at` (`cnt` entries) and every buffer it names, read 64 entries at a time. */
static void add_iov_spans(struct spans *sp, uintptr_t at, long cnt)
{
    if (cnt <= 0 || cnt > 1024) return; /* the kernel refuses more than IOV_MAX with EINVAL */
    add_span(sp, at, sizeof(struct iovec) * (size_t)cnt);
    struct iovec iov[64];
    for (long done = 0; done < cnt && !sp->all; done += 64) {
        int k = cnt - done > 64 ? 64 : (int)(cnt - done);
        copy_in(iov, at + sizeof(struct iovec) * (size_t)done, sizeof(struct iovec) * (size_t)k);
        for (int i = 0; i < k; i++) add_span(sp, (uintptr_t)iov[i].iov_base, iov[i].iov_len);
    }
}

/* The kernel handles at most UIO_MAXIOV messages of an mmsghdr array per call, and ignores the rest. */
#define MMSG_MAX 1024

static long mmsg_count(long vlen)
{
    unsigned int n = (unsigned int)vlen;
    return n > MMSG_MAX ? MMSG_MAX : (long)n;
}

/* A msghdr's buffers: its iovecs, name and control buffers. */
static void add_msghdr_spans(struct spans *sp, const struct msghdr *mh)
{
    add_iov_spans(sp, (uintptr_t)mh->msg_iov, (long)mh->msg_iovlen);
    add_span(sp, (uintptr_t)mh->msg_name, mh->msg_namelen);
    add_span(sp, (uintptr_t)mh->msg_control, mh->msg_controllen);
}

/* An mmsghdr array of `cnt` messages and every buffer its msghdrs name, read 16 messages at a time. */
static void add_mmsg_spans(struct spans *sp, uintptr_t at, long cnt)
{
    add_span(sp, at, sizeof(struct mmsghdr) * (size_t)cnt);
    struct mmsghdr m[16];
    for (long done = 0; done < cnt && !sp->all; done += 16) {
        int k = cnt - done > 16 ? 16 : (int)(cnt - done);
        if (copy_in(m, at + sizeof(struct mmsghdr) * (size_t)done, sizeof(struct mmsghdr) * (size_t)k)) return;
        for (int i = 0; i < k; i++) add_msghdr_spans(sp, &m[i].msg_hdr);
    }
}

/* The bytes one buffer of the table covers, given the call's arguments. */
static size_t buf_bytes(const struct buf *b, const long *a)
{
    switch (b->len) {
    case LEN_ARG: return (size_t)a[b->n];
    case LEN_FIXED: return b->size;
    case LEN_ELEMS: return (size_t)a[b->n] * b->size;
    case LEN_PAGES: return ((size_t)a[b->n] + (size_t)g.page - 1) / (size_t)g.page;
    case LEN_FDSET: return ((size_t)a[0] + 63) / 64 * 8;
    }
    return 0;
}

/* A path is read up to its NUL, not PATH_BYTES: when that NUL lies in the moved piece the path starts */
/* in, the path is reached through that piece's alias (a short string at the end of .rodata is not    */
/* taken for a span into the next piece). Lock held.                                                  */
static int path_in_one_piece(uintptr_t at, size_t len, intptr_t *delta)
{
    size_t stretch = reach_stretch_locked(at, at + len, delta);
    if (!stretch || !*delta) return 0;
    const volatile char *p = (const volatile char *)(at + (uintptr_t)*delta);
    for (size_t i = 0; i < stretch; i++)
        if (!p[i]) return 1;
    return 0;
}

/* Collects what the call may read or write into `sp`; sp->all when only opening everything is exact. */
/* A plain buffer (not an iovec or msghdr, whose pointers live in memory) that lies in one piece of     */
/* moved memory is given to the kernel as its alias address in k[] instead: nothing is opened.          */
void describe_syscall(long nr, const long *a, struct spans *sp, long *k, struct redirected *rd)
{
    const struct syscall_bufs *d = syscall_bufs_of(nr);
    if (!d) {
        /* Not in the table: a pointer into traced memory means a buffer of unknown size. */
        spin_lock(&g.lock);
        for (int i = 0; i < 6; i++)
            if (is_traced_address((uintptr_t)a[i])) sp->all = 1;
        spin_unlock(&g.lock);
        return;
    }
    for (int i = 0; i < 4 && d->b[i].len != LEN_NONE; i++) {
        const struct buf *b = &d->b[i];
        uintptr_t at = (uintptr_t)a[b->arg];
        int need = (b->flags & B_OUT) ? PROT_WRITE : PROT_READ;
        if (b->len == LEN_IOV || b->len == LEN_RIOV) {
            int ours = b->len == LEN_IOV || a[0] == g.pid;
            if (g.aliases) {
                int r = iov_redirect(&rd->iov[rd->niov], at, a[b->n], need, ours);
                if (r < 0) continue; /* the kernel refuses it without touching a buffer */
                if (r) {
                    k[b->arg] = (long)rd->iov[rd->niov].v;
                    k[b->n] = rd->iov[rd->niov].n;
                    rd->niov++;
                    continue;
                }
            }
            if (ours) add_iov_spans(sp, at, a[b->n]);
            else add_span(sp, at, sizeof(struct iovec) * (size_t)(a[b->n] > 0 && a[b->n] <= IOV_MAX_KERNEL ? a[b->n] : 0));
        } else if (b->len == LEN_MSGHDR) {
            if (g.aliases && at && msghdr_redirect(rd, at, need)) {
                k[b->arg] = (long)&rd->mh;
                continue;
            }
            struct msghdr mh;
            if (!at || copy_in(&mh, at, sizeof mh)) continue;
            add_span(sp, at, sizeof mh);
            add_msghdr_spans(sp, &mh);
        } else if (b->len == LEN_MMSG) {
            long cnt = mmsg_count(a[b->n]);
            if (g.aliases && at) {
                int r = mmsg_redirect(rd, at, cnt, need);
                if (r < 0) continue;
                if (r) {
                    k[b->arg] = (long)rd->mm;
                    continue;
                }
                redirected_release(rd); /* no other vector in these calls: nothing else is released */
            }
            if (at) add_mmsg_spans(sp, at, cnt);
        } else {
            size_t len = buf_bytes(b, a);
            if (g.aliases && at && len) {
                intptr_t delta;
                spin_lock(&g.lock);
                int reach = reach_without_opening(at, at + len, &delta);
                if (!reach && b->len == LEN_FIXED && b->size == PATH_BYTES) reach = path_in_one_piece(at, len, &delta);
                spin_unlock(&g.lock);
                if (reach) {
                    k[b->arg] = (long)(at + (uintptr_t)delta);
                    continue;
                }
            }
            add_span(sp, at, len);
        }
    }
}

/* Block events for the kernel's reads (G) or writes (W) of an iovec array, up to `total` bytes. */
static void emit_iov(int op, long nr, uintptr_t ip, uintptr_t at, long cnt, long total)
{
    struct iovec iov[64];
    for (long done = 0; done < cnt && total > 0; done += 64) {
        int k = cnt - done > 64 ? 64 : (int)(cnt - done);
        if (copy_in(iov, at + sizeof(struct iovec) * (size_t)done, sizeof(struct iovec) * (size_t)k)) return;
        for (int i = 0; i < k && total > 0; i++) {
            long n = (long)iov[i].iov_len < total ? (long)iov[i].iov_len : total;
            if (op == MT_BLK_STORE) emit_block(op, nr, ip, (uintptr_t)iov[i].iov_base, 0, (uint64_t)n);
            else emit_block(op, nr, ip, 0, (uintptr_t)iov[i].iov_base, (uint64_t)n);
            total -= n;
        }
    }
}

/* The block events of a call that returned `ret` >= 0: the table's B_RECORD buffers. */
void record_syscall(long nr, const long *a, uintptr_t ip, long ret)
{
    const struct syscall_bufs *d = syscall_bufs_of(nr);
    if (!d) return;
    for (int i = 0; i < 4 && d->b[i].len != LEN_NONE; i++) {
        const struct buf *b = &d->b[i];
        if (!(b->flags & B_RECORD)) continue;
        int op = (b->flags & B_OUT) ? MT_BLK_STORE : MT_BLK_FETCH;
        uintptr_t at = (uintptr_t)a[b->arg];
        if (b->len == LEN_IOV) {
            emit_iov(op, nr, ip, at, a[b->n], ret);
        } else if (b->len == LEN_MSGHDR) {
            struct msghdr mh;
            if (!copy_in(&mh, at, sizeof mh)) emit_iov(op, nr, ip, (uintptr_t)mh.msg_iov, (long)mh.msg_iovlen, ret);
        } else if (b->len == LEN_MMSG) {
            /* `ret` messages, each with the bytes its msg_len says */
            for (long i = 0; i < ret && i < mmsg_count(a[b->n]); i++) {
                struct mmsghdr m;
                if (copy_in(&m, at + sizeof m * (size_t)i, sizeof m)) break;
                emit_iov(op, nr, ip, (uintptr_t)m.msg_hdr.msg_iov, (long)m.msg_hdr.msg_iovlen, m.msg_len);
            }
        } else {
            uint64_t n = (uint64_t)ret < buf_bytes(b, a) ? (uint64_t)ret : buf_bytes(b, a);
            if (op == MT_BLK_STORE) emit_block(op, nr, ip, at, 0, n);
            else emit_block(op, nr, ip, 0, at, n);
        }
    }
}
