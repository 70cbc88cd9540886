/*
 * memtrace agent, what the program may set up that fault mode must keep apart or refuse (issue 26).
 *
 * 1. The program's RLIMIT_AS. The agent's address space is counted with the
 * program's: the heap's two 32 GiB reservations, the alias view of every moved mapping, its tables. A
 * program that lowered RLIMIT_AS to 256 MiB as untraced programs do left the agent no room to map
 * anything, and the fault handler spun on its failed maps. So the limit is the program's, kept here and
 * applied to what the program uses:
 *
 *   setrlimit / prlimit64(self, RLIMIT_AS, new)
 *       the kernel gets base + 2 x limit (base: the process's size at the first such call, agent included;
 *       twice: a moved mapping takes its alias view as much again), never above the hard limit it had;
 *       RLIM_INFINITY passes as it is
 *   getrlimit / prlimit64(self, RLIMIT_AS, ..., old)
 *       answer the limit the program set
 *   the agent's heap (heap.c)
 *       grows no further than the program's soft limit: malloc returns NULL where glibc's would run out
 *
 * Output: none (the limits are as the program set them, as it reads them back).
 *
 * What it gets wrong: the program's own mappings may reach up to twice its limit before the kernel
 * refuses one (untraced: once), and the heap's cap counts only the heap, not the program's other
 * mappings, so a program that mallocs until NULL stops at about its limit of heap rather than its limit
 * less its code and stacks. A limit set before memtrace started the program (ulimit -v) is the kernel's
 * and below the agent's reservations: the agent's heap is not reserved then (heap.c falls back to glibc).
 * A limit another process sets on this one (prlimit from outside) is the kernel's too: when the agent then
 * cannot map its table of openings, recording stops for good with one line (traced.c,
 * stop_for_memory_locked) instead of the fault handler retrying forever.
 * RLIMIT_DATA is not virtualized.
 *
 * 2. Threads fault mode cannot trace, refused (refused_clone). The agent keeps each thread's state in its
 *    own TLS, which glibc's pthread_create lays out for every thread. A clone or clone3 that shares the
 *    address space without being a vfork and without a glibc thread block as its TLS (CLONE_SETTLS with
 *    tcb->tcb == tcb->self == tls) — a raw clone3 on an mmapped stack, with the parent's TLS or one of its
 *    own — would run the agent's handlers on the parent's state or on the program's bytes (crashes, hangs,
 *    stores under the parent's tid, or none recorded). It fails with ENOSYS, as on a kernel without it,
 *    and one line on standard error says why.
 *
 * 3. io_uring, refused (refused_io_uring). The kernel reaches an io_uring buffer whenever it completes
 *    the request, long after the system call that submitted it, so the pages cannot be opened for it; a
 *    read into traced memory failed with EFAULT. io_uring_setup fails with ENOSYS, as on a kernel built
 *    without io_uring (liburing users fall back or say so), with one line on standard error.
 *
 * Output: the two refusals' lines on the program's standard error, each once per process:
 *     memtrace: fault mode cannot trace a thread made by a raw clone3 (no glibc thread block): the call fails with ENOSYS
 *     memtrace: fault mode cannot trace io_uring (the kernel touches its buffers after the call): io_uring_setup fails with ENOSYS
 * (clone for clone3 when it was clone.)
 */
#include "agent.h"

#include <linux/sched.h>
#include <sys/resource.h>

static struct {
    int set;                 /* the program lowered RLIMIT_AS: base and want hold */
    uint64_t base;           /* the process's size (bytes) at the first such call */
    struct rlimit want;      /* what the program set and reads back */
} as;

static void say_once(int *said, const char *line)
{
    if (__atomic_exchange_n(said, 1, __ATOMIC_RELAXED)) return;
    mt_sys3(SYS_write, 2, (long)line, (long)mt_strlen(line));
}

int refused_clone(long nr, const long *a)
{
    static int said;
    uint64_t flags = 0, tls = 0;
    if (nr != SYS_clone && nr != SYS_clone3) return 0;
    if (nr == SYS_clone3) {
        uint64_t args[8];
        if ((unsigned long)a[1] < 64 || copy_in(args, (uintptr_t)a[0], sizeof args)) return 0; /* the kernel says EINVAL/EFAULT */
        flags = args[0];
        tls = args[7];
    } else {
        flags = (uint64_t)a[0];
        tls = (uint64_t)a[4];
    }
    if (!(flags & CLONE_VM) || (flags & CLONE_VFORK) || !g.active) return 0;
    if (flags & CLONE_SETTLS) {
        uintptr_t tcb[3];
        if (copy_in(tcb, (uintptr_t)tls, sizeof tcb) == 0 && tcb[0] == tls && tcb[2] == tls) return 0; /* glibc's */
    }
    say_once(&said, nr == SYS_clone3
        ? "memtrace: fault mode cannot trace a thread made by a raw clone3 (no glibc thread block): the call fails with ENOSYS\n"
        : "memtrace: fault mode cannot trace a thread made by a raw clone (no glibc thread block): the call fails with ENOSYS\n");
    return 1;
}

int refused_io_uring(long nr)
{
    static int said;
    if (nr != SYS_io_uring_setup || !g.active) return 0;
    say_once(&said, "memtrace: fault mode cannot trace io_uring (the kernel touches its buffers after the call): io_uring_setup fails with ENOSYS\n");
    return 1;
}

/* The process's size (VmSize, bytes), or 0 when /proc is not there. */
static uint64_t vm_size(void)
{
    long fd = mt_sys3(SYS_open, (long)"/proc/self/statm", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return 0;
    char buf[64];
    long n = mt_sys3(SYS_read, fd, (long)buf, sizeof buf - 1);
    mt_sys1(SYS_close, fd);
    uint64_t pages = 0;
    for (long i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++) pages = pages * 10 + (uint64_t)(buf[i] - '0');
    return pages * (uint64_t)g.page;
}

static rlim_t widen(rlim_t v, rlim_t cap)
{
    if (v == RLIM_INFINITY) return v;
    rlim_t w = as.base + 2 * v;
    if (w < v || w > cap) w = cap; /* overflow, or above the hard limit the kernel holds */
    return w;
}

/* Which argument of nr is RLIMIT_AS's new value and old value (-1: none); 0 when nr is no such call. */
static int as_args(long nr, const long *a, int *new_at, int *old_at)
{
    *new_at = *old_at = -1;
    if (nr == SYS_setrlimit && a[0] == RLIMIT_AS) *new_at = 1;
    else if (nr == SYS_getrlimit && a[0] == RLIMIT_AS) *old_at = 1;
    else if (nr == SYS_prlimit64 && (a[0] == 0 || a[0] == g.pid) && a[1] == RLIMIT_AS) {
        *new_at = a[2] ? 2 : -1;
        *old_at = a[3] ? 3 : -1;
    } else {
        return 0;
    }
    return 1;
}

int as_limit_before(long nr, const long *a, long *k, struct rlimit *kernel)
{
    int new_at, old_at;
    if (!as_args(nr, a, &new_at, &old_at) || new_at < 0) return 0;
    struct rlimit want, now;
    if (copy_in(&want, (uintptr_t)a[new_at], sizeof want)) return 0; /* the kernel says EFAULT */
    if (want.rlim_cur == RLIM_INFINITY && want.rlim_max == RLIM_INFINITY && !as.set) return 0;
    if (mt_sys4(SYS_prlimit64, 0, RLIMIT_AS, 0, (long)&now) != 0) return 0;
    if (!as.set) as.base = vm_size();
    kernel->rlim_max = widen(want.rlim_max, now.rlim_max);
    kernel->rlim_cur = widen(want.rlim_cur, kernel->rlim_max);
    if (want.rlim_cur > want.rlim_max) kernel->rlim_cur = kernel->rlim_max + 1; /* EINVAL, as untraced */
    k[new_at] = (long)kernel;
    return 1;
}

void as_limit_after(long nr, const long *a, const long *k, long ret, int widened)
{
    int new_at, old_at;
    if (ret != 0 || !as_args(nr, a, &new_at, &old_at)) return;
    struct rlimit before = as.want;
    int was_set = as.set;
    if (widened) { /* the program's value is the one it reads back */
        copy_in(&as.want, (uintptr_t)a[new_at], sizeof as.want);
        as.set = 1;
    }
    if (old_at >= 0 && was_set) user_transfer(&before, (uintptr_t)k[old_at], sizeof before, 1);
}

uint64_t as_limit_heap(void) { return as.set ? (uint64_t)as.want.rlim_cur : ~(uint64_t)0; }
