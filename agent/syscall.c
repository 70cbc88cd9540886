/*
 * memtrace agent, system calls. Linux syscall user dispatch sends every system call made outside the
 * agent's own code to the SIGSYS handler, which opens the pages its user buffers lie in, makes the call from
 * inside the agent (exempt from dispatch), records the kernel's reads and writes of the I/O family as
 * MT_BLOCK records (flag MT_BLK_SYSCALL, `what` the call's number), and protects again. Without this, a
 * write() of a heap buffer fails with EFAULT. What each call reads and writes is described in ONE table
 * (syscall_table). A call with more buffers than the agent can open one by one, and a call the table does
 * not know that passes a pointer into traced memory, runs with all traced memory open: slower, never
 * different from an untraced run. A plain buffer in moved memory (traced.c) is not opened at all: the
 * kernel gets its alias address instead; so are the buffers of an iovec array (readv, writev, preadv*,
 * pwritev*, process_vm_*), of a msghdr (sendmsg, recvmsg) and of an mmsghdr array (sendmmsg, recvmmsg):
 * the kernel gets a copy of the array, or of the msghdrs, naming the alias addresses, and what the call
 * writes into them (recvmsg's lengths and flags, each message's msg_len) is given back.
 *
 * Calls the agent must see through: clone with CLONE_VM runs natively (the handler lets that one call
 * through and regains control with the trap flag, in the parent and in the new thread, which then turns
 * dispatch on for itself); fork runs from inside the handler, the child makes private copies of moved
 * memory (the parent waits for them) and runs untraced; exit, exec and
 * a fatal signal the program sends itself write the end of the process to the stream first; sigaction,
 * sigprocmask and sigaltstack are emulated so that the agent's three signals stay its own, every handler
 * returns through the agent's restorer, and the program's alternate stack is kept.
 *
 * What it gets wrong: a fatal signal sent by another process leaves no `fatal` record; a system call made
 * by code the table does not know, with a pointer into traced memory, opens everything (other threads'
 * accesses during it are not seen); a vector buffer in traced memory that is not moved (a file mapping),
 * or one split into more than IOV_MAX pieces (more than MMSG_IOVS over all of an mmsghdr array's messages),
 * is opened; the remote side of process_vm_* on this process itself is reached through the alias but not
 * recorded as block events, nor are the lengths and flags the kernel writes into a msghdr or an mmsghdr's
 * msg_len (only the data the calls move is); the block records say what the kernel may have touched, up
 * to the call's result, not byte by byte. A private futex waited on through an alias address is keyed by that address:
 * every futex call of the program is rewritten the same way, but the kernel's own wake-ups (robust
 * mutexes of a dying thread, clear_child_tid) at a program address in moved memory would miss it. A
 * clone3 or a clone on a new stack without CLONE_VM leaves its child sharing moved memory with the parent.
 */
#include "agent.h"
#include <linux/futex.h>
#include <sys/resource.h>
#include <sys/wait.h>

/* ------------------------------------------------------------------------------------------------ */
/* System calls (syscall user dispatch)                                                             */

#define MAX_SPANS 32
struct spans { int n; int all; uintptr_t s[MAX_SPANS], e[MAX_SPANS]; };

/* Adds one buffer; past MAX_SPANS the call falls back to opening all traced memory (`all`). */
static void add_span(struct spans *sp, uintptr_t a, size_t len)
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

/* ------------------------------------------------------------------------------------------------ */
/* Redirected vectors: an iovec array (readv, writev, process_vm_*, a msghdr's) is copied into agent     */
/* memory with each buffer given as its alias address, split where it crosses from one moved piece into  */
/* the next or into untraced memory; the kernel gets the copy, so nothing is opened. The kernel fills    */
/* and drains the pieces in order, exactly as it would the program's buffers.                           */

#define IOV_MAX_KERNEL 1024
#define IOV_ON_STACK 64
struct iov_copy {
    struct iovec *v;             /* the copy: `small` or a mapping of `cap` entries */
    int n, cap;
    struct iovec small[IOV_ON_STACK];
};

static void iov_release(struct iov_copy *c)
{
    if (c->v && c->v != c->small) mt_sys2(SYS_munmap, (long)c->v, sizeof(struct iovec) * (size_t)c->cap);
    c->v = NULL;
}

static int iov_append(struct iov_copy *c, uintptr_t base, size_t len)
{
    if (c->n == IOV_MAX_KERNEL) return 0; /* split past the kernel's limit: the caller opens instead */
    if (c->n == c->cap) {
        struct iovec *t = agent_map(sizeof(struct iovec) * IOV_MAX_KERNEL);
        if (!t) return 0;
        mt_memcpy(t, c->v, sizeof(struct iovec) * (size_t)c->n);
        c->v = t;
        c->cap = IOV_MAX_KERNEL;
    }
    c->v[c->n++] = (struct iovec){(void *)base, len};
    return 1;
}

/* Whether the program may use memory at `a`, reached with `delta` (0: untraced, as it is), the way a   */
/* buffer is used (`need`): the kernel must see the program's own view otherwise, to fail as it would.  */
/* Lock held.                                                                                          */
static int may_use_locked(uintptr_t a, intptr_t delta, int need)
{
    if (!delta) return 1;
    struct range *r = set_find(a);
    return r && (r->prot & need) == need;
}

/* One buffer of `len` bytes at `a` as pieces the kernel reaches without opening anything: moved memory */
/* the program may use that way (`need`) through its alias, untraced memory as it is. 0 when some of it */
/* is traced but not moved, or moved without the program's right to it (the kernel must see the       */
/* program's view then, to fail as it would untraced).                                                 */
static int iov_redirect_one(struct iov_copy *c, uintptr_t a, size_t len, int need)
{
    uintptr_t e = a + len < a ? UINTPTR_MAX : a + len;
    while (a < e) {
        intptr_t delta;
        spin_lock(&g.lock);
        size_t piece = reach_stretch_locked(a, e, &delta);
        int allowed = piece && may_use_locked(a, delta, need);
        spin_unlock(&g.lock);
        if (!allowed || !iov_append(c, a + (uintptr_t)delta, piece)) return 0;
        a += piece;
    }
    return 1;
}

/* The program's iovec array at `at` (`cnt` entries) as a redirected copy in *c; `translate` 0 keeps the */
/* buffers' addresses (another process's). 0 when it cannot be (the caller opens the buffers instead);  */
/* an array the kernel refuses anyway (a count out of range) is left to the kernel, untouched (-1).     */
static int iov_redirect(struct iov_copy *c, uintptr_t at, long cnt, int need, int translate)
{
    c->v = c->small;
    c->n = 0;
    c->cap = IOV_ON_STACK;
    if (cnt < 0 || cnt > IOV_MAX_KERNEL) return -1;
    struct iovec in[IOV_ON_STACK];
    for (long done = 0; done < cnt; done += IOV_ON_STACK) {
        int k = cnt - done > IOV_ON_STACK ? IOV_ON_STACK : (int)(cnt - done);
        if (copy_in(in, at + sizeof(struct iovec) * (size_t)done, sizeof(struct iovec) * (size_t)k)) return -1;
        for (int i = 0; i < k; i++) {
            int ok = !translate || !in[i].iov_len
                ? iov_append(c, (uintptr_t)in[i].iov_base, in[i].iov_len)
                : iov_redirect_one(c, (uintptr_t)in[i].iov_base, in[i].iov_len, need);
            if (!ok) { iov_release(c); return 0; }
        }
    }
    return 1;
}

/* What a call's vectors became: the copies the kernel reads, and for a msghdr the copy it gets and   */
/* where the program's own lies (delta: its alias), to give back what recvmsg writes into it; for an   */
/* mmsghdr array the same, in one mapping that also holds every message's redirected iovecs.          */
#define MMSG_IOVS 4096           /* iovecs over all messages of one call, after splitting at pieces */
struct redirected {
    struct iov_copy iov[2];
    int niov;
    struct msghdr mh;
    uintptr_t mh_at;             /* 0: no msghdr */
    intptr_t mh_delta;
    struct mmsghdr *mm;          /* NULL: no mmsghdr array; else cnt copies, then MMSG_IOVS iovecs */
    long mm_n;
    size_t mm_bytes;
    uintptr_t mm_at;
    intptr_t mm_delta;
};

static void redirected_release(struct redirected *rd)
{
    for (int i = 0; i < rd->niov; i++) iov_release(&rd->iov[i]);
    rd->niov = 0;
    if (rd->mm) mt_sys2(SYS_munmap, (long)rd->mm, (long)rd->mm_bytes);
    rd->mm = NULL;
}

/* A plain buffer of the msghdr (name, control) through its alias, or as it is when untraced; 0 when */
/* it would have to be opened.                                                                         */
static int reach_plain(uintptr_t *a, size_t len, int need)
{
    if (!*a || !len) return 1;
    intptr_t delta;
    spin_lock(&g.lock);
    int allowed = reach_without_opening(*a, *a + len, &delta) && may_use_locked(*a, delta, need);
    spin_unlock(&g.lock);
    if (allowed) *a += (uintptr_t)delta;
    return allowed;
}

/* The msghdr at `at` redirected: its copy in rd->mh with the iovecs, name and control buffers as alias */
/* addresses. 0 when some part would need opening.                                                      */
static int msghdr_redirect(struct redirected *rd, uintptr_t at, int need)
{
    intptr_t delta;
    spin_lock(&g.lock);
    int reach = reach_without_opening(at, at + sizeof rd->mh, &delta);
    spin_unlock(&g.lock);
    if (!reach || copy_in(&rd->mh, at, sizeof rd->mh)) return 0;
    uintptr_t name = (uintptr_t)rd->mh.msg_name, control = (uintptr_t)rd->mh.msg_control;
    if (!reach_plain(&name, rd->mh.msg_namelen, need) || !reach_plain(&control, rd->mh.msg_controllen, need)) return 0;
    struct iov_copy *c = &rd->iov[rd->niov];
    if (iov_redirect(c, (uintptr_t)rd->mh.msg_iov, (long)rd->mh.msg_iovlen, need, 1) != 1) return 0;
    rd->niov++;
    rd->mh.msg_name = (void *)name;
    rd->mh.msg_control = (void *)control;
    rd->mh.msg_iov = c->v;
    rd->mh.msg_iovlen = (size_t)c->n;
    rd->mh_at = at;
    rd->mh_delta = delta;
    return 1;
}

/* The mmsghdr array at `at` (`cnt` messages) redirected: copied with each msghdr's iovecs, name and   */
/* control buffers as alias addresses. 0 when some part would need opening or exceeds the copy's room;  */
/* -1 for an array the kernel handles without touching a buffer (no messages).                          */
static int mmsg_redirect(struct redirected *rd, uintptr_t at, long cnt, int need)
{
    if (!cnt) return -1;
    size_t array = sizeof(struct mmsghdr) * (size_t)cnt;
    intptr_t delta;
    spin_lock(&g.lock);
    /* the kernel writes each message's msg_len: the program must have the right to that too */
    int reach = reach_without_opening(at, at + array, &delta) && may_use_locked(at, delta, PROT_READ | PROT_WRITE);
    spin_unlock(&g.lock);
    if (!reach) return 0;
    size_t bytes = page_up(array + sizeof(struct iovec) * MMSG_IOVS);
    struct mmsghdr *mm = agent_map(bytes);
    if (!mm) return 0;
    rd->mm = mm;
    rd->mm_bytes = bytes;
    if (copy_in(mm, at, array)) return 0;
    struct iovec *pool = (struct iovec *)((char *)mm + array);
    int used = 0;
    for (long i = 0; i < cnt; i++) {
        struct msghdr *h = &mm[i].msg_hdr;
        uintptr_t name = (uintptr_t)h->msg_name, control = (uintptr_t)h->msg_control;
        if (!reach_plain(&name, h->msg_namelen, need) || !reach_plain(&control, h->msg_controllen, need)) return 0;
        struct iov_copy c;
        if (iov_redirect(&c, (uintptr_t)h->msg_iov, (long)h->msg_iovlen, need, 1) != 1) {
            iov_release(&c);
            return 0;
        }
        int fits = c.n <= MMSG_IOVS - used;
        if (fits) mt_memcpy(pool + used, c.v, sizeof(struct iovec) * (size_t)c.n);
        iov_release(&c);
        if (!fits) return 0;
        h->msg_name = (void *)name;
        h->msg_control = (void *)control;
        h->msg_iov = pool + used;
        h->msg_iovlen = (size_t)c.n;
        used += c.n;
    }
    rd->mm_n = cnt;
    rd->mm_at = at;
    rd->mm_delta = delta;
    return 1;
}

/* recvmsg wrote the lengths and flags into a msghdr copy: they go to the program's msghdr at `p`. */
static void msghdr_give_back(const struct msghdr *mh, uintptr_t p)
{
    user_transfer((void *)&mh->msg_namelen, p + offsetof(struct msghdr, msg_namelen), sizeof mh->msg_namelen, 1);
    user_transfer((void *)&mh->msg_controllen, p + offsetof(struct msghdr, msg_controllen), sizeof mh->msg_controllen, 1);
    user_transfer((void *)&mh->msg_flags, p + offsetof(struct msghdr, msg_flags), sizeof mh->msg_flags, 1);
}

/* The call handled `done` messages: each one's msg_len, and for recvmmsg its msghdr's lengths and flags, */
/* go to the program's array (its alias).                                                                */
static void mmsg_give_back(const struct redirected *rd, long nr, long done)
{
    for (long i = 0; i < done && i < rd->mm_n; i++) {
        uintptr_t p = rd->mm_at + (uintptr_t)rd->mm_delta + sizeof(struct mmsghdr) * (size_t)i;
        user_transfer((void *)&rd->mm[i].msg_len, p + offsetof(struct mmsghdr, msg_len), sizeof rd->mm[i].msg_len, 1);
        if (nr == SYS_recvmmsg) msghdr_give_back(&rd->mm[i].msg_hdr, p);
    }
}

/* Collects what the call may read or write into `sp`; sp->all when only opening everything is exact. */
/* A plain buffer (not an iovec or msghdr, whose pointers live in memory) that lies in one piece of     */
/* moved memory is given to the kernel as its alias address in k[] instead: nothing is opened.          */
static void describe_syscall(long nr, const long *a, struct spans *sp, long *k, struct redirected *rd)
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
static void record_syscall(long nr, const long *a, uintptr_t ip, long ret)
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

static long do_fork_like(long nr, long *a, ucontext_t *uc)
{
    /* Moved memory is shared with its memfd: the child must get private copies before anything changes */
    /* it. The parent holds g.lock (other threads' accesses to traced memory wait in segv_access) and   */
    /* waits for redirected steps under way, then for the child to have made its copies.                */
    heap_fork_prepare();
    spin_lock(&g.lock);
    while (__atomic_load_n(&g.redirected, __ATOMIC_ACQUIRE)) __builtin_ia32_pause();
    volatile int *copied = NULL;
    if (g.nalias) {
        long p = mt_sys6(SYS_mmap, 0, g.page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (!mt_failed(p)) copied = (volatile int *)p;
    }
    long ret = mt_sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (ret == 0) {
        /* the child, alone: it runs untraced, all its memory accessible and its own */
        g.recording = 0;
        g.all_open = 0;
        protect_all_locked(0);
        alias_make_private_locked(0, UINTPTR_MAX);
        if (copied) {
            __atomic_store_n(copied, 1, __ATOMIC_RELEASE);
            mt_sys3(SYS_futex, (long)copied, FUTEX_WAKE, 1);
            mt_sys2(SYS_munmap, (long)copied, g.page);
        }
        g.active = 0;
        ts.dispatch_on = 0;
        spin_unlock(&g.lock);
        heap_fork_done(1);
        return 0;
    }
    if (ret > 0 && copied) {
        while (!__atomic_load_n(copied, __ATOMIC_ACQUIRE)) {
            struct timespec t = {0, 20 * 1000 * 1000};
            mt_sys4(SYS_futex, (long)copied, FUTEX_WAIT, 0, (long)&t);
            siginfo_t info;
            info.si_pid = 0;
            /* a child that died before it signalled must not hold the parent forever */
            if (!__atomic_load_n(copied, __ATOMIC_ACQUIRE) &&
                mt_sys6(SYS_waitid, P_PID, ret, (long)&info, WEXITED | WNOHANG | WNOWAIT, 0, 0) == 0 && info.si_pid == ret)
                break;
        }
    }
    if (copied) mt_sys2(SYS_munmap, (long)copied, g.page);
    spin_unlock(&g.lock);
    heap_fork_done(0);
    if (ret > 0) {
        REC(MT_FORK, struct mt_fork, f);
        f.child_pid = (uint64_t)ret;
        emit(&f);
    }
    return ret;
}

/* Lets the syscall at rip-2 run natively once and regains control with the trap flag afterwards. A   */
/* thread it creates is counted now, not when the child first runs: until then the parent would still */
/* believe itself alone and take the open route for its untraced touches (fault.c) while the child     */
/* already runs. The parent's trap uncounts it if the clone failed.                                   */
static void run_natively(ucontext_t *uc, int reprotect, int thread)
{
    greg_t *gr = uc->uc_mcontext.gregs;
    if (reprotect) {
        spin_lock(&g.lock);
        open_all_locked();
        spin_unlock(&g.lock);
    }
    ts.native_pending = 1;
    ts.native_reprotect = reprotect;
    ts.native_thread = thread && g.active;
    if (ts.native_thread) __atomic_add_fetch(&g.threads, 1, __ATOMIC_SEQ_CST);
    g.clone_parent = mytid();
    ts.selector = SUD_ALLOW;
    gr[REG_RIP] -= 2;
    gr[REG_EFL] |= EFLAGS_TF;
}

/* The program's sigaction. Its actions live in g.app_action and are what it reads back; the kernel   */
/* holds ours: the program's handlers are reached through on_program_signal (fault.c), and the agent's  */
/* three signals stay with the agent, their program handlers called by forward().                       */
static void handle_sigaction(long *a, long *ret)
{
    int sig = (int)a[0];
    struct ksigaction act, old;
    if (sig < 1 || sig > 64 || sig == SIGKILL || sig == SIGSTOP || a[3] != 8) { /* the kernel's errors */
        *ret = mt_sys4(SYS_rt_sigaction, sig, a[1], a[2], a[3]);
        return;
    }
    old = g.app_action[sig];
    if (a[1] && copy_in(&act, (uintptr_t)a[1], sizeof act)) { *ret = -EFAULT; return; }
    if (a[1]) {
        g.app_action[sig] = act;
        if (sig != SIGSEGV && sig != SIGTRAP && sig != SIGSYS) {
            long r = install_program_action(sig);
            if (r) { g.app_action[sig] = old; *ret = r; return; }
        }
    }
    if (a[2] && user_transfer(&old, (uintptr_t)a[2], sizeof old, 1)) { *ret = -EFAULT; return; } /* span open */
    *ret = 0;
}

/* The program's sigprocmask. Its mask is the one our sigreturn restores, so the call works on the      */
/* context, not on the thread (whose mask the return would overwrite). Our signals stay unblocked.    */
static long program_sigprocmask(const long *a, ucontext_t *uc)
{
    uint64_t mask, set = 0;
    if (a[3] != 8) return -EINVAL;
    mt_memcpy(&mask, &uc->uc_sigmask, 8);
    /* the new set is read before the old is written (they may be the same); the spans are open */
    if (a[1] && user_transfer(&set, (uintptr_t)a[1], 8, 0)) return -EFAULT;
    if (a[2] && user_transfer(&mask, (uintptr_t)a[2], 8, 1)) return -EFAULT;
    if (!a[1]) return 0;
    switch (a[0]) {
    case SIG_BLOCK: mask |= set; break;
    case SIG_UNBLOCK: mask &= ~set; break;
    case SIG_SETMASK: mask = set; break;
    default: return -EINVAL;
    }
    mask &= ~(OUR_SIGNALS | sigbit(SIGKILL) | sigbit(SIGSTOP));
    mt_memcpy(&uc->uc_sigmask, &mask, 8);
    return 0;
}

/* The program's sigaltstack. The kernel's alternate stack is the program's when it set one, else the   */
/* agent's (our handlers run on it: a stack overflow must still reach them). A handler's return       */
/* restores the alternate stack from its context, so the change is made there, not with the call.      */
/* Memory the program gives as a signal stack is a stack: it leaves the traced set (the kernel could    */
/* not write a signal frame onto protected pages).                                                      */
static long program_sigaltstack(const long *a, ucontext_t *uc)
{
    stack_t cur = {0, SS_DISABLE, 0}, nw;
    uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
    int on = 0;
    if (ts.app_alt.ss_sp) {
        cur = ts.app_alt;
        on = sp > (uintptr_t)cur.ss_sp && sp - (uintptr_t)cur.ss_sp <= cur.ss_size;
        if (on) cur.ss_flags = SS_ONSTACK;
    }
    if (a[0] && copy_in(&nw, (uintptr_t)a[0], sizeof nw)) return -EFAULT;
    if (a[1] && user_transfer(&cur, (uintptr_t)a[1], sizeof cur, 1)) return -EFAULT; /* span open */
    if (!a[0]) return 0;
    if (on) return -EPERM;
    int mode = nw.ss_flags & ~SS_AUTODISARM;
    if (mode != 0 && mode != SS_ONSTACK && mode != SS_DISABLE) return -EINVAL;
    if (mode == SS_DISABLE) {
        ts.app_alt.ss_sp = 0;
        if (ts.alt.ss_sp) uc->uc_stack = ts.alt;
        return 0;
    }
    if (nw.ss_size < (size_t)MINSIGSTKSZ) return -ENOMEM;
    nw.ss_flags &= SS_AUTODISARM;
    ts.app_alt = nw;
    uc->uc_stack = nw;
    uintptr_t s = page_down((uintptr_t)nw.ss_sp), e = page_up((uintptr_t)nw.ss_sp + nw.ss_size);
    spin_lock(&g.lock);
    int known = 0;
    for (int i = 0; i < g.nstacks; i++) known |= g.stacks[i].s == s && g.stacks[i].e == e;
    if (!known && g.nstacks < (int)(sizeof g.stacks / sizeof g.stacks[0])) {
        g.stacks[g.nstacks].s = s;
        g.stacks[g.nstacks].e = e;
        g.nstacks++;
    }
    set_remove_locked(s, e, 1);
    spin_unlock(&g.lock);
    return 0;
}

/* A signal sent to this process or thread whose default action ends it (abort() raising SIGABRT, for  */
/* one) never reaches a handler of ours: the end is written to the stream before the call.              */
static void note_fatal_self_signal(long nr, const long *a, ucontext_t *uc)
{
    int sig = (int)(nr == SYS_tgkill ? a[2] : a[1]);
    int self = nr == SYS_kill ? (a[0] == g.pid || a[0] == 0) : nr == SYS_tkill ? a[0] == mytid() : a[0] == g.pid;
    if (!self || sig <= 0 || sig >= 65 || sig == SIGSEGV || sig == SIGTRAP || sig == SIGSYS) return;
    switch (sig) {
    case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH: case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
        return;
    }
    uint64_t mask;
    mt_memcpy(&mask, &uc->uc_sigmask, 8);
    if (mask & sigbit(sig)) return;
    struct ksigaction act;
    if (mt_sys4(SYS_rt_sigaction, sig, 0, &act, 8) != 0 || act.handler != SIG_DFL) return;
    emit_stats_and_exit(MT_EXIT_SIGNAL, (uint64_t)sig, (uint64_t)uc->uc_mcontext.gregs[REG_RIP], ~0ULL, NULL);
}

static void syscall_for_program(int sig, siginfo_t *si, void *ucv);
SIGNAL_HANDLER(on_sys, syscall_for_program, PROF_SYS)

static void syscall_for_program(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    greg_t *gr = uc->uc_mcontext.gregs;
    if (si->si_code != SYS_USER_DISPATCH_CODE) { forward(sig, si, uc); return; }
    long nr = gr[REG_RAX];
    long a[6] = {gr[REG_RDI], gr[REG_RSI], gr[REG_RDX], gr[REG_R10], gr[REG_R8], gr[REG_R9]};
    uintptr_t ip = (uintptr_t)gr[REG_RIP];
    long ret;
    count(&g.syscalls);

    if (refused_clone(nr, a) || refused_io_uring(nr)) { /* limits.c: said in one line */
        gr[REG_RAX] = -ENOSYS;
        return;
    }
    switch (nr) {
    case SYS_rt_sigreturn: /* a handler installed before we could fix its restorer */
        ts.selector = SUD_ALLOW;
        gr[REG_RIP] -= 2;
        return;
    case SYS_clone:
        if (a[0] & CLONE_VM) { run_natively(uc, (a[0] & CLONE_VFORK) != 0, !(a[0] & CLONE_VFORK)); return; }
        if (a[1]) { run_natively(uc, 1, 0); return; } /* a process on its own stack: rare, run natively */
        gr[REG_RAX] = do_fork_like(nr, a, uc);
        return;
    case SYS_clone3: {
        uint64_t flags = 0;
        copy_in(&flags, (uintptr_t)a[0], 8);
        run_natively(uc, (flags & CLONE_VM) == 0 || (flags & CLONE_VFORK) != 0,
                     (flags & CLONE_VM) && !(flags & CLONE_VFORK));
        return;
    }
    case SYS_vfork:
        run_natively(uc, 1, 0);
        return;
    case SYS_fork:
        gr[REG_RAX] = do_fork_like(nr, a, uc);
        return;
    case SYS_exit_group:
        emit_stats_and_exit(MT_EXIT_NORMAL, (uint64_t)a[0], ip, 0, NULL);
        mt_sys1(SYS_exit_group, a[0]);
        return;
    case SYS_exit:
        emit_thread(0, (uint64_t)a[0]);
        __atomic_sub_fetch(&g.threads, 1, __ATOMIC_RELAXED);
        mt_sys1(SYS_exit, a[0]);
        return;
    case SYS_execve:
    case SYS_execveat: {
        int was_recording = g.recording;
        control(0, ip);
        char path[512];
        uintptr_t p = (uintptr_t)(nr == SYS_execve ? a[0] : a[1]);
        size_t n = 0; /* read byte by byte through the kernel: the path may end right before unmapped memory */
        while (n < sizeof path - 1 && p && user_transfer(&path[n], p + n, 1, 0) == 0 && path[n]) n++;
        path[n] = 0;
        emit_stats_and_exit(MT_EXIT_EXEC, 0, ip, 0, path);
        ret = mt_sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
        /* still here: the exec failed and the program goes on, traced again; the trace says so */
        __atomic_store_n(&g.ring->done, 0, __ATOMIC_RELEASE);
        emit_exit(MT_EXIT_EXEC_FAILED, (uint64_t)-ret, ip, 0, path);
        if (was_recording) control(1, ip);
        gr[REG_RAX] = ret;
        return;
    }
    case SYS_kill: case SYS_tkill: case SYS_tgkill:
        note_fatal_self_signal(nr, a, uc);
        break; /* and the call runs below */
    }

    /* Open every traced page the call may read or write for the time of the call, or give the kernel */
    /* the alias addresses (k: the arguments as the kernel gets them).                                  */
    long k[6] = {a[0], a[1], a[2], a[3], a[4], a[5]};
    struct redirected rd;
    rd.niov = 0;
    rd.mh_at = 0;
    rd.mm = NULL;
    struct spans sp;
    sp.n = 0;
    sp.all = 0;
    spin_lock(&g.lock);
    int recording = g.recording;
    spin_unlock(&g.lock);
    if (recording) {
        describe_syscall(nr, a, &sp, k, &rd);
        spin_lock(&g.lock);
        int opened = 0;
        while (!sp.all && opened < sp.n && open_locked(sp.s[opened], sp.e[opened])) opened++;
        if (!sp.all && opened < sp.n) sp.all = 1; /* no memory for the table of openings */
        if (sp.all) {
            for (int i = 0; i < opened; i++) close_locked(sp.s[i], sp.e[i]);
            sp.n = 0;
            open_all_locked();
        }
        spin_unlock(&g.lock);
    }

    struct rlimit as_kernel;
    int as_widened = as_limit_before(nr, a, k, &as_kernel);
    uintptr_t brk_before = nr == SYS_brk ? (uintptr_t)mt_sys1(SYS_brk, 0) : 0;
    if (nr == SYS_mremap) {
        /* a memfd cannot follow the mapping's growth: it moves as private memory, and is moved again */
        spin_lock(&g.lock);
        alias_make_private_locked(page_down((uintptr_t)a[0]), page_up((uintptr_t)a[0] + (uintptr_t)a[1]));
        spin_unlock(&g.lock);
    }
    switch (nr) {
    case SYS_rt_sigaction:
        handle_sigaction(a, &ret);
        break;
    case SYS_rt_sigprocmask:
        ret = program_sigprocmask(a, uc);
        break;
    case SYS_sigaltstack:
        ret = program_sigaltstack(a, uc);
        break;
    default:
        ret = mt_sys6(nr, k[0], k[1], k[2], k[3], k[4], k[5]);
    }

    as_limit_after(nr, a, k, ret, as_widened);
    if (rd.mh_at && nr == SYS_recvmsg && ret >= 0) msghdr_give_back(&rd.mh, rd.mh_at + (uintptr_t)rd.mh_delta);
    if (rd.mm && ret > 0) mmsg_give_back(&rd, nr, ret);
    redirected_release(&rd);
    if (recording && ret >= 0 && !ts.untraced) /* inside a wrapper the kernel works for the allocator */
        record_syscall(nr, a, ip, ret);

    /* The memory map changed under the traced set: keep the set true to it. */
    if (ret >= 0 || (ret < -4095)) {
        spin_lock(&g.lock);
        switch (nr) {
        case SYS_munmap:
            set_remove_locked(page_down((uintptr_t)a[0]), page_up((uintptr_t)a[0] + (uintptr_t)a[1]), 0);
            alias_forget_locked(page_down((uintptr_t)a[0]), page_up((uintptr_t)a[0] + (uintptr_t)a[1]));
            break;
        case SYS_mmap:
            if (a[3] & MAP_FIXED) {
                set_remove_locked(page_down((uintptr_t)ret), page_up((uintptr_t)ret + (uintptr_t)a[1]), 0);
                alias_forget_locked(page_down((uintptr_t)ret), page_up((uintptr_t)ret + (uintptr_t)a[1]));
            }
            break;
        case SYS_madvise:
            if (a[2] == MADV_DONTNEED)
                alias_discard_locked(page_down((uintptr_t)a[0]), page_up((uintptr_t)a[0] + (uintptr_t)a[1]));
            break;
        case SYS_mremap: {
            struct range *r = set_find((uintptr_t)a[0]);
            if (r) {
                int prot = r->prot, kind = r->kind;
                set_remove_locked(page_down((uintptr_t)a[0]), page_up((uintptr_t)a[0] + (uintptr_t)a[1]), 0);
                set_add_locked(page_down((uintptr_t)ret), page_up((uintptr_t)ret + (uintptr_t)a[2]), prot, kind);
            }
            break;
        }
        case SYS_brk:
            /* the heap shrank: pages above the break are gone, a later growth brings fresh ones */
            if ((uintptr_t)ret < brk_before) {
                set_remove_locked(page_up((uintptr_t)ret), page_up(brk_before), 0);
                alias_forget_locked(page_up((uintptr_t)ret), page_up(brk_before));
            }
            break;
        case SYS_mprotect: case SYS_pkey_mprotect: {
            /* The program changed the rights: remember them, and keep traced memory protected. */
            uintptr_t s = page_down((uintptr_t)a[0]), e = page_up((uintptr_t)a[0] + (uintptr_t)a[1]);
            /* Each traced piece is re-added with the new rights (executable or inaccessible memory  */
            /* is not traced: set_add_locked refuses it, and faults there are the program's own).      */
            struct range pieces[16];
            int np = 0;
            for (int i = set_index(s); i < g.nset && g.set[i].start < e && np < 16; i++) {
                pieces[np] = g.set[i];
                if (pieces[np].start < s) pieces[np].start = s;
                if (pieces[np].end > e) pieces[np].end = e;
                np++;
            }
            for (int i = 0; i < np; i++) {
                set_remove_locked(pieces[i].start, pieces[i].end, 0);
                set_add_locked(pieces[i].start, pieces[i].end, (int)a[2], pieces[i].kind);
            }
            break;
        }
        }
        spin_unlock(&g.lock);
    }

    if (sp.n || sp.all) {
        spin_lock(&g.lock);
        for (int i = 0; i < sp.n; i++) close_locked(sp.s[i], sp.e[i]);
        if (sp.all) close_all_locked();
        spin_unlock(&g.lock);
    }
    gr[REG_RAX] = ret;
}

/* Turns syscall user dispatch on for the calling thread. */
void enable_dispatch(void)
{
    ts.selector = SUD_BLOCK;
    long r = mt_sys6(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, (long)g.text_start,
                  (long)(g.text_end - g.text_start), (long)&ts.selector, 0);
    ts.dispatch_on = r == 0;
}

/* The actions the process has before dispatch is on become the program's (g.app_action); a handler   */
/* among them is reached through on_program_signal from now on, as handle_sigaction installs them.     */
void adopt_existing_handlers(void)
{
    for (int sig = 1; sig < 65; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP || sig == SIGSEGV || sig == SIGTRAP || sig == SIGSYS) continue;
        if (mt_sys4(SYS_rt_sigaction, sig, 0, &g.app_action[sig], 8) != 0) continue;
        if (g.app_action[sig].handler != SIG_DFL && g.app_action[sig].handler != SIG_IGN) install_program_action(sig);
    }
}
