/*
 * memtrace agent: loaded into the traced program with LD_PRELOAD, it records every data access to the
 * program's traced memory and hands the raw facts to memtrace (the JVM) through a shared-memory ring
 * (include/memtrace_stream.h). It names nothing and formats nothing: that is Java's job.
 *
 * How an access is caught (the MadT scheme):
 *   1. Traced pages (data/bss/rodata of the executable and libraries, the heap, memory the program maps
 *      or allocates) have all access rights removed.
 *   2. An access faults; the SIGSEGV handler records {ip, address, read/write as the CPU reported it,
 *      thread}, gives the page its rights back and blocks asynchronous signals.
 *   3. The instruction runs once, then its pages lose their rights again and the signal mask comes back.
 *      An instruction that faults on several pages collects them all before it completes. How it runs
 *      is decided once per instruction address (decoded with Zydis, kept in the code cache):
 *      - Out of line: a copy of the instruction in an executable code-cache slot near the original code
 *        (a RIP-relative displacement rewritten for the new place) runs in its place and jumps on to
 *        mt_ool_return, a stub that closes the pages from the program's stack, leaving every register and
 *        flag as the instruction did, and continues after the original instruction. A fault of the copy
 *        is recorded and reported at the original address.
 *      - Emulated: jmp/call through memory (every PLT stub reads the executable's GOT) reads its target
 *        while the page is open and does not run at all.
 *      - With the trap flag: branches and anything else that reads RIP, rep string instructions (they
 *        must fault, and be recorded, once per iteration), div/idiv (a #DE must show the program its own
 *        address), system instructions. The CPU traps after the instruction; the SIGTRAP handler closes.
 *      MEMTRACE_STEP=trap takes the trap for every instruction. The default (MEMTRACE_STEP=ool) falls back
 *      to it when libZydis.so.4.0 cannot be loaded.
 *
 * The rest keeps the program working exactly as it would untraced:
 *   - System calls: Linux syscall user dispatch sends every system call made outside the agent's own code
 *     to a SIGSYS handler, which opens the pages its user buffers lie in, makes the call from inside the
 *     agent (exempt from dispatch), records the kernel's reads/writes of the I/O family as block events,
 *     and protects again. Without this, a write() of a heap buffer fails with EFAULT. What each call
 *     reads and writes is described in one table (syscall_table). A call with more buffers than the
 *     agent can open one by one, and a call the table does not know that passes a pointer into traced
 *     memory, runs with all traced memory open: slower, never different from an untraced run. Thread creation
 *     (clone with CLONE_VM) runs natively: the handler lets that one syscall through and regains control
 *     with the trap flag, in the parent and in the new thread, which then turns dispatch on for itself.
 *     fork runs from inside the handler; the child gets all rights back and runs untraced.
 *   - Wrappers for malloc & co. and mmap & co. record each call (caller, arguments, result). The
 *     allocator's own touches of the heap are not accesses of the program: inside a wrapper, a fault just
 *     opens the page until the wrapper returns. A new block's pages become traced at once. memcpy,
 *     memmove and memset called by the program are one block event each, not a fault per byte.
 *   - The program's own SIGSEGV/SIGTRAP/SIGSYS handlers are kept aside and called for faults that are not
 *     ours; attempts to block those three signals are filtered out; every handler the program installs
 *     returns through a restorer inside the agent (dispatch would otherwise intercept rt_sigreturn).
 *   - Alternate signal stacks: each thread gets one of the agent's, so that the SIGSEGV/SIGTRAP handlers
 *     still run when the program overflows its stack. The program's sigaltstack is emulated: the kernel's
 *     alternate stack is the program's while it has one (its SA_ONSTACK handlers run there, as untraced),
 *     else the agent's; the change is made in the SIGSYS handler's context, which is why that handler
 *     does not run on the alternate stack. Pages given as a signal stack stop being traced for good.
 *   - How the process ends is always in the stream: exit, exec (and a failed exec), a fatal fault, and a
 *     fatal signal the program sends itself (abort()). The agent asks the kernel to kill the program when
 *     memtrace dies (PR_SET_PDEATHSIG survives the exec that made this process the program).
 *
 * Limits worth knowing: protection is per process and the trap flag per thread, so while one thread has
 * a page open another thread's access to it is not seen; the agent counts such windows (windows_at_risk).
 * Stacks, code, the dynamic loader and the agent itself are never traced. An out-of-line copy that raises
 * SIGBUS or SIGFPE (a file mapping past its end, an unmasked SIMD exception) shows the program's handler
 * the copy's address, and x87 state saved after it names the copy as the last FPU instruction. A
 * program whose thread has no alternate stack of its own but installs an SA_ONSTACK handler sees that
 * handler run on the agent's alternate stack (untraced it would run on the thread's stack); a fatal
 * signal sent by another process (kill -TERM) leaves no `fatal` record, only memtrace's exit status.
 *
 * The agent never calls into the traced allocator, never uses libc for a system call (every syscall is
 * issued from agent code so dispatch lets it through) and never touches program memory without opening
 * it first.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/socket.h>
#include <ucontext.h>
#include <unistd.h>
#include <sched.h>
#include <malloc.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/auxv.h>

#include "memtrace_stream.h"
#include "mt_native.h"

#define EXPORT __attribute__((visibility("default")))

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_OFF 0
#define PR_SYS_DISPATCH_ON 1
#endif
#ifndef PR_SET_PDEATHSIG
#define PR_SET_PDEATHSIG 1
#endif
#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif
#define SUD_ALLOW 0
#define SUD_BLOCK 1
#define SYS_USER_DISPATCH_CODE 2 /* si_code of a dispatch SIGSYS */
#define EFLAGS_TF 0x100UL
#define PF_WRITE_BIT 0x2UL
#define PF_FETCH_BIT 0x10UL

/* ------------------------------------------------------------------------------------------------ */
/* Raw system calls: issued from agent code, so syscall user dispatch lets them through.            */

/* mt_sys0 … mt_sys6: include/mt_native.h. */

/* rt_sigreturn for every handler the process has: dispatch would trap libc's restorer. */
__attribute__((naked, used)) static void mt_restorer(void)
{
    __asm__ volatile("mov $15, %eax\n\tsyscall\n\thlt");
}

struct ksigaction {
    void *handler;
    unsigned long flags;
    void *restorer;
    uint64_t mask;
};
#define KSA_RESTORER 0x04000000UL

static long user_transfer(void *ours, uintptr_t theirs, size_t n, int to_program);

/* The statistics are bumped by every thread, some of them outside any lock. */
static void count(volatile uint64_t *counter) { __atomic_add_fetch(counter, 1, __ATOMIC_RELAXED); }

static uint64_t sigbit(int sig) { return 1ULL << (sig - 1); }
/* The three signals the agent lives on; the program may never block them. */
#define OUR_SIGNALS (sigbit(SIGSEGV) | sigbit(SIGTRAP) | sigbit(SIGSYS))

static void mt_memcpy(void *d, const void *s, size_t n)
{
    unsigned char *dd = d;
    const unsigned char *ss = s;
    while (n--) *dd++ = *ss++;
}
static void mt_memmove(void *d, const void *s, size_t n)
{
    unsigned char *dd = d;
    const unsigned char *ss = s;
    if (dd < ss) { while (n--) *dd++ = *ss++; }
    else { dd += n; ss += n; while (n--) *--dd = *--ss; }
}
static size_t mt_strlen(const char *s)
{
    size_t n = 0;
    while (s[n]) n++;
    return n;
}
static int mt_strncmp(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i] != b[i]) return (unsigned char)a[i] - (unsigned char)b[i];
        if (!a[i]) return 0;
    }
    return 0;
}
static void mt_memzero(void *d, size_t n)
{
    volatile unsigned char *dd = d;
    while (n--) *dd++ = 0;
}

/* Memory for the agent's own tables: straight from the kernel, never from the traced allocator. */
static void *agent_map(size_t n)
{
    long p = mt_sys6(SYS_mmap, 0, (long)n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p < 0 && p > -4096 ? NULL : (void *)p;
}

/* ------------------------------------------------------------------------------------------------ */
/* Locks. Each is taken with every signal blocked (in our handlers by sa_mask, elsewhere explicitly), */
/* so a thread never re-enters a lock it holds.                                                       */

typedef struct { volatile int v; } spinlock;
static void spin_lock(spinlock *l)
{
    while (__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(&l->v, __ATOMIC_RELAXED)) __builtin_ia32_pause();
    }
}
static void spin_unlock(spinlock *l) { __atomic_store_n(&l->v, 0, __ATOMIC_RELEASE); }

static uint64_t block_signals(void)
{
    uint64_t all = ~0ULL, old = 0;
    mt_sys4(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, 8);
    return old;
}
static void restore_signals(uint64_t old) { mt_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &old, 0, 8); }

/* ------------------------------------------------------------------------------------------------ */
/* State                                                                                            */

struct thread_state {
    volatile char selector;      /* syscall user dispatch: SUD_BLOCK sends syscalls to SIGSYS */
    int tid;
    int dispatch_on;
    int untraced;                /* depth of wrappers whose memory touches are not the program's */
    int stepping;                /* STEP_*: pages are open for one instruction */
    int nstep;
    uintptr_t step_pages[8];
    uint64_t step_saved_mask;
    uintptr_t ool_ip;            /* STEP_OOL: the instruction's own address, */
    uintptr_t ool_slot;          /* ...the copy that runs in its place, */
    uintptr_t ool_resume;        /* ...and where the program goes on afterwards */
    int nlazy;
    uintptr_t lazy_pages[64];
    int native_pending;          /* one syscall is being run natively; the trap brings us back */
    int native_reprotect;        /* ...and everything was opened for it (vfork-like clone) */
    int in_handler;              /* inside one of our signal handlers: signals are blocked already */
    stack_t alt;                 /* the agent's alternate signal stack for this thread */
    stack_t app_alt;             /* the one the program set with sigaltstack (ss_sp 0: none) */
};
static __thread struct thread_state ts __attribute__((tls_model("initial-exec")));
/* Top of this thread's stack for mt_ool_return's call into C (0: none, the program's stack serves). */
__thread uintptr_t mt_ool_stack __attribute__((tls_model("initial-exec"), visibility("hidden")));
enum { STEP_NONE, STEP_TRAP, STEP_OOL }; /* how the current step runs: trap flag or out-of-line copy */

struct range {
    uintptr_t start, end;
    int prot;                    /* the rights the program gave the memory */
    int kind;                    /* enum mt_region */
};

struct opening {
    uintptr_t start, end;
    int count;
};

static struct {
    int active;                  /* attached to a memtrace session; 0 in a forked child */
    int recording;               /* traced pages are protected and accesses recorded */
    int regions;                 /* MT_REGION_* to trace */
    int autostart;
    long page;
    uintptr_t text_start, text_end;
    char self_path[512];
    int pid;
    int ppid;
    volatile int threads;

    struct mt_ring_header *ring;
    unsigned char *ring_data;
    uint64_t ring_mask;
    spinlock ring_lock;

    spinlock lock;               /* traced set and openings */
    struct range *set;
    int nset, capset;
    struct opening *open;        /* grows as needed: no fixed number of openings */
    int nopen, capopen;
    int all_open;                /* calls running with all traced memory open (see syscall_table) */
    struct { uintptr_t s, e; } stacks[64]; /* pages the program gave as signal stacks: never traced */
    int nstacks;

    struct ksigaction app_action[65]; /* the program's handlers for SIGSEGV/SIGTRAP/SIGSYS */

    volatile uint64_t faults, steps, syscalls, windows, untraced_faults;
    int reported_modules;
    volatile int clone_parent;   /* tid of the thread whose clone(CLONE_VM) ran last: the new thread's parent */
} g;

/* The real functions behind the wrappers. */
static struct {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void (*free)(void *);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    void *(*reallocarray)(void *, size_t, size_t);
    void *(*mmap)(void *, size_t, int, int, int, off_t);
    void *(*mremap)(void *, size_t, size_t, int, ...);
    int (*munmap)(void *, size_t);
    void *(*memcpy)(void *, const void *, size_t);
    void *(*memmove)(void *, const void *, size_t);
    void *(*memset)(void *, int, size_t);
    void *(*dlopen)(const char *, int);
    void (*cxa_finalize)(void *);
    int (*libc_start_main)(int (*)(int, char **, char **), int, char **, void (*)(void), void (*)(void),
                           void (*)(void), void *);
} real;
static int hooks_ready;

static int mytid(void)
{
    if (!ts.tid) ts.tid = (int)mt_sys0(SYS_gettid);
    return ts.tid;
}

static uintptr_t page_down(uintptr_t a) { return a & ~(uintptr_t)(g.page - 1); }
static uintptr_t page_up(uintptr_t a) { return (a + g.page - 1) & ~(uintptr_t)(g.page - 1); }

/* ------------------------------------------------------------------------------------------------ */
/* The ring                                                                                         */

/* Appends one record; `rec` starts with a filled-in mt_rec_header whose size is a multiple of 8.     */
/* Waits while the ring is full; drops (and counts) only when memtrace is gone.                       */
static void emit(void *rec)
{
    if (!g.active || !g.ring) return;
    struct mt_rec_header *h = rec;
    h->tid = (uint32_t)mytid();
    uint64_t size = h->size;
    uint64_t old = ts.in_handler ? 0 : block_signals();
    spin_lock(&g.ring_lock);
    uint64_t cap = g.ring_mask + 1;
    for (;;) {
        uint64_t tail = g.ring->tail;
        uint64_t at = tail & g.ring_mask;
        uint64_t pad = (at + size > cap) ? cap - at : 0;
        uint64_t head = __atomic_load_n(&g.ring->head, __ATOMIC_ACQUIRE);
        if (tail + pad + size - head <= cap) {
            if (pad) {
                struct mt_rec_header *p = (void *)(g.ring_data + at);
                p->type = MT_PAD;
                p->flags = 0;
                p->size = (uint16_t)pad; /* < 8 KiB: no record is larger */
                p->tid = 0;
                tail += pad;
                at = 0;
            }
            mt_memcpy(g.ring_data + at, rec, size);
            __atomic_store_n(&g.ring->tail, tail + size, __ATOMIC_RELEASE);
            break;
        }
        if (mt_sys0(SYS_getppid) != g.ppid) { /* memtrace is gone: nobody will ever read this */
            __atomic_add_fetch(&g.ring->lost, 1, __ATOMIC_RELAXED);
            break;
        }
        struct timespec t = {0, 50000};
        mt_sys2(SYS_nanosleep, &t, 0);
    }
    spin_unlock(&g.ring_lock);
    if (!ts.in_handler) restore_signals(old);
}

#define REC(type_, T, var) \
    T var; \
    mt_memzero(&var, sizeof var); \
    var.h.type = (type_); \
    var.h.size = sizeof(T)

/* A record with a trailing string (and optional bytes before it), padded to 8. */
static void emit_with_tail(void *fixed, size_t fixed_size, const void *b1, size_t n1, const void *b2, size_t n2)
{
    unsigned char buf[8192];
    size_t total = (fixed_size + n1 + n2 + 7) & ~(size_t)7;
    if (total > sizeof buf) {
        n2 = sizeof buf - fixed_size - n1;
        total = sizeof buf;
    }
    mt_memzero(buf, total);
    mt_memcpy(buf, fixed, fixed_size);
    if (n1) mt_memcpy(buf + fixed_size, b1, n1);
    if (n2) mt_memcpy(buf + fixed_size + n1, b2, n2);
    ((struct mt_rec_header *)buf)->size = (uint16_t)total;
    emit(buf);
}

static void emit_exit(int how, uint64_t value, uint64_t ip, uint64_t addr, const char *path)
{
    REC(MT_EXIT, struct mt_exit, e);
    e.h.flags = (uint8_t)how;
    e.value = value;
    e.ip = ip;
    e.addr = addr;
    size_t n = path ? mt_strlen(path) : 0;
    e.path_len = (uint32_t)n;
    emit_with_tail(&e, sizeof e, NULL, 0, path, n);
}

static void emit_stats_and_exit(int how, uint64_t value, uint64_t ip, uint64_t addr, const char *path)
{
    if (!g.active) return;
    REC(MT_STATS, struct mt_stats, s);
    s.faults = g.faults;
    s.steps = g.steps;
    s.syscalls = g.syscalls;
    s.windows_at_risk = g.windows;
    s.untraced_faults = g.untraced_faults;
    emit(&s);
    emit_exit(how, value, ip, addr, path);
    __atomic_store_n(&g.ring->done, 1, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------------------------------------ */
/* The traced set: sorted, disjoint page ranges with the rights the program gave them.               */

static int set_index(uintptr_t a) /* first range with end > a */
{
    int lo = 0, hi = g.nset;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (g.set[mid].end <= a) lo = mid + 1; else hi = mid;
    }
    return lo;
}

static struct range *set_find(uintptr_t a)
{
    int i = set_index(a);
    return i < g.nset && g.set[i].start <= a ? &g.set[i] : NULL;
}

static int set_reserve(int extra)
{
    if (g.nset + extra <= g.capset) return 1;
    int cap = g.capset ? g.capset * 2 : 1024;
    while (cap < g.nset + extra) cap *= 2;
    struct range *n = agent_map(sizeof(struct range) * (size_t)cap);
    if (!n) return 0;
    if (g.set) {
        mt_memcpy(n, g.set, sizeof(struct range) * (size_t)g.nset);
        mt_sys2(SYS_munmap, g.set, sizeof(struct range) * (size_t)g.capset);
    }
    g.set = n;
    g.capset = cap;
    return 1;
}

static int covered_by_opening(uintptr_t page)
{
    for (int i = 0; i < g.nopen; i++)
        if (g.open[i].start <= page && page < g.open[i].end) return 1;
    return 0;
}

/* Takes the rights away from [s, e) except from pages someone has open right now. */
static void protect_span(uintptr_t s, uintptr_t e)
{
    if (g.all_open) return; /* the last one to close everything protects it all again */
    if (!g.nopen) { mt_sys3(SYS_mprotect, s, e - s, PROT_NONE); return; }
    uintptr_t run = s;
    for (uintptr_t p = s; p < e; p += g.page) {
        if (covered_by_opening(p)) {
            if (run < p) mt_sys3(SYS_mprotect, run, p - run, PROT_NONE);
            run = p + g.page;
        }
    }
    if (run < e) mt_sys3(SYS_mprotect, run, e - run, PROT_NONE);
}

static void emit_range(int add, uintptr_t s, uintptr_t e, int kind, int prot)
{
    REC(MT_RANGE, struct mt_range, r);
    r.h.flags = add ? MT_RANGE_ADD : MT_RANGE_REMOVE;
    r.start = s;
    r.end = e;
    r.kind = (uint32_t)kind;
    r.prot = (uint32_t)prot;
    emit(&r);
}

/* Drops [s, e) from the set. `restore` gives the memory its rights back (it is still mapped). Lock held. */
static void set_remove_locked(uintptr_t s, uintptr_t e, int restore)
{
    int i = set_index(s);
    while (i < g.nset && g.set[i].start < e) {
        struct range r = g.set[i];
        uintptr_t cs = r.start > s ? r.start : s, ce = r.end < e ? r.end : e;
        if (restore && g.recording) mt_sys3(SYS_mprotect, cs, ce - cs, r.prot);
        emit_range(0, cs, ce, r.kind, r.prot);
        if (r.start < s && r.end > e) { /* split in two */
            if (!set_reserve(1)) return;
            mt_memmove(&g.set[i + 2], &g.set[i + 1], sizeof(struct range) * (size_t)(g.nset - i - 1));
            g.set[i].end = s;
            g.set[i + 1] = r;
            g.set[i + 1].start = e;
            g.nset++;
            return;
        } else if (r.start < s) {
            g.set[i].end = s;
            i++;
        } else if (r.end > e) {
            g.set[i].start = e;
            return;
        } else {
            mt_memmove(&g.set[i], &g.set[i + 1], sizeof(struct range) * (size_t)(g.nset - i - 1));
            g.nset--;
        }
    }
}

/* Adds [s, e) with the program's rights `prot`; protects it when recording. Lock held. */
static void set_add_locked(uintptr_t s, uintptr_t e, int prot, int kind)
{
    if (s >= e || !(g.regions & kind) || !(prot & (PROT_READ | PROT_WRITE)) || (prot & PROT_EXEC)) return;
    for (int i = 0; i < g.nstacks; i++) {
        if (g.stacks[i].s < e && s < g.stacks[i].e) { /* the kernel writes signal frames there */
            uintptr_t ss = g.stacks[i].s, se = g.stacks[i].e;
            set_add_locked(s, ss, prot, kind);
            set_add_locked(se, e, prot, kind);
            return;
        }
    }
    set_remove_locked(s, e, 0);
    if (!set_reserve(1)) return;
    int i = set_index(s);
    mt_memmove(&g.set[i + 1], &g.set[i], sizeof(struct range) * (size_t)(g.nset - i));
    g.set[i] = (struct range){s, e, prot, kind};
    g.nset++;
    if (g.recording) protect_span(s, e);
    emit_range(1, s, e, kind, prot);
}

static int set_covers_locked(uintptr_t s, uintptr_t e)
{
    while (s < e) {
        struct range *r = set_find(s);
        if (!r) return 0;
        s = r->end;
    }
    return 1;
}

/* Opens the traced pages of [s, e) (counted, so overlapping openings by several threads nest). Lock held. */
/* 0 only when no memory is left for the table of openings, and then nothing was opened.               */
static int open_locked(uintptr_t s, uintptr_t e)
{
    for (int i = 0; i < g.nopen; i++) {
        if (g.open[i].start == s && g.open[i].end == e) {
            g.open[i].count++;
            return 1;
        }
    }
    if (g.nopen == g.capopen) {
        int cap = g.capopen ? g.capopen * 2 : 256;
        struct opening *n = agent_map(sizeof(struct opening) * (size_t)cap);
        if (!n) return 0; /* out of memory: the caller falls back (a system call opens everything) */
        if (g.open) {
            mt_memcpy(n, g.open, sizeof(struct opening) * (size_t)g.nopen);
            mt_sys2(SYS_munmap, g.open, sizeof(struct opening) * (size_t)g.capopen);
        }
        g.open = n;
        g.capopen = cap;
    }
    g.open[g.nopen++] = (struct opening){s, e, 1};
    if (g.threads > 1) count(&g.windows);
    int i = set_index(s);
    for (; i < g.nset && g.set[i].start < e; i++) {
        uintptr_t cs = g.set[i].start > s ? g.set[i].start : s;
        uintptr_t ce = g.set[i].end < e ? g.set[i].end : e;
        mt_sys3(SYS_mprotect, cs, ce - cs, g.set[i].prot);
    }
    return 1;
}

static void close_locked(uintptr_t s, uintptr_t e)
{
    int k;
    for (k = 0; k < g.nopen; k++)
        if (g.open[k].start == s && g.open[k].end == e) break;
    if (k == g.nopen) return;
    if (--g.open[k].count > 0) return;
    g.open[k] = g.open[--g.nopen];
    if (!g.recording) return;
    int i = set_index(s);
    for (; i < g.nset && g.set[i].start < e; i++) {
        uintptr_t cs = g.set[i].start > s ? g.set[i].start : s;
        uintptr_t ce = g.set[i].end < e ? g.set[i].end : e;
        protect_span(cs, ce);
    }
}

/* Opens (or closes) a span of program memory from normal, non-handler context. */
static void open_span(uintptr_t s, uintptr_t e, int open)
{
    if (s >= e) return;
    uint64_t old = block_signals();
    spin_lock(&g.lock);
    if (g.recording) {
        if (open) open_locked(page_down(s), page_up(e));
        else close_locked(page_down(s), page_up(e));
    }
    spin_unlock(&g.lock);
    restore_signals(old);
}

static void protect_all_locked(int on)
{
    for (int i = 0; i < g.nset; i++) {
        if (on) protect_span(g.set[i].start, g.set[i].end);
        else mt_sys3(SYS_mprotect, g.set[i].start, g.set[i].end - g.set[i].start, g.set[i].prot);
    }
}

/* All traced memory open, for a call the agent cannot describe exactly (counted: calls of several      */
/* threads nest). Lock held.                                                                            */
static void open_all_locked(void)
{
    if (g.all_open++ == 0 && g.recording) protect_all_locked(0);
}
static void close_all_locked(void)
{
    if (--g.all_open == 0 && g.recording) protect_all_locked(1);
}

/* ------------------------------------------------------------------------------------------------ */
/* Decoding the faulting instruction: Zydis 4.0, loaded at run time                                 */

/* The part of Zydis 4.0's ABI the agent uses, declared here so that neither building nor running    */
/* the agent needs the Zydis headers. Where they are installed, the build checks these against them.  */
struct zy_decoder { uint32_t opaque[5]; };
struct zy_insn {                 /* ZydisDecodedInstruction */
    uint32_t machine_mode;
    uint32_t mnemonic;
    uint8_t length;
    uint8_t _a[15];
    uint8_t operand_count;
    uint8_t _b[7];
    uint64_t attributes;
    uint8_t _c[52];
    uint32_t category;           /* meta.category */
    uint8_t _d[8];
    uint32_t branch_type;        /* meta.branch_type */
    uint8_t _e[156];
    int64_t disp;                /* raw.disp.value */
    uint8_t disp_size;           /* raw.disp.size, in bits */
    uint8_t disp_offset;         /* raw.disp.offset */
    uint8_t _f[54];
};
struct zy_operand {              /* ZydisDecodedOperand */
    uint8_t _a[16];
    uint16_t size;               /* bits */
    uint8_t _b[14];
    uint32_t type;
    uint32_t _c;
    union {
        struct { uint32_t type, segment, base, index; uint8_t scale; uint8_t _d[15]; int64_t disp; } mem;
        struct { uint8_t is_signed, is_relative; } imm;
    };
};
#define ZY_MAX_OPERANDS 10
#define ZY_FAILED(status) (((status) & 0x80000000u) != 0)
#define ZY_VERSION_4_0 0x00040000u   /* ZydisGetVersion() >> 32: major 4, minor 0 */
#define ZY_MODE_LONG_64 0
#define ZY_STACK_WIDTH_64 2
#define ZY_MNEMONIC_CALL 67
#define ZY_MNEMONIC_DIV 147
#define ZY_MNEMONIC_IDIV 274
#define ZY_MNEMONIC_JMP 307
#define ZY_REG_NONE 0
#define ZY_REG_RAX 53            /* RAX..R15 in encoding order */
#define ZY_REG_R15 68
#define ZY_REG_EIP 196
#define ZY_REG_RIP 197
#define ZY_REG_FS 202
#define ZY_REG_GS 203
#define ZY_OPERAND_MEMORY 2
#define ZY_OPERAND_IMMEDIATE 4
#define ZY_MEMOP_MEM 1
#define ZY_BRANCH_NEAR 2
#define ZY_ATTRIB_ANY_REP ((1ULL << 28) | (1ULL << 29) | (1ULL << 30)) /* HAS_REP, HAS_REPE, HAS_REPNE */
/* ZydisInstructionCategory: the categories that change control flow or the machine's state */
#define ZY_CAT_CALL 20
#define ZY_CAT_COND_BR 28
#define ZY_CAT_INTERRUPT 43
#define ZY_CAT_IO 44
#define ZY_CAT_IOSTRINGOP 45
#define ZY_CAT_RET 75
#define ZY_CAT_SEGOP 78
#define ZY_CAT_SGX 82
#define ZY_CAT_SYSCALL 89
#define ZY_CAT_SYSRET 90
#define ZY_CAT_SYSTEM 91
#define ZY_CAT_UINTR 95
#define ZY_CAT_UNCOND_BR 96

#if __has_include(<Zydis/Zydis.h>)
#include <Zydis/Zydis.h>
#define ZY_SAME_FIELD(mine, theirs) \
    _Static_assert(offsetof(struct zy_insn, mine) == offsetof(ZydisDecodedInstruction, theirs), #theirs)
#define ZY_SAME_OPERAND_FIELD(mine, theirs) \
    _Static_assert(offsetof(struct zy_operand, mine) == offsetof(ZydisDecodedOperand, theirs), #theirs)
_Static_assert(sizeof(struct zy_decoder) == sizeof(ZydisDecoder), "ZydisDecoder");
_Static_assert(sizeof(struct zy_insn) == sizeof(ZydisDecodedInstruction), "ZydisDecodedInstruction");
_Static_assert(sizeof(struct zy_operand) == sizeof(ZydisDecodedOperand), "ZydisDecodedOperand");
ZY_SAME_FIELD(mnemonic, mnemonic);
ZY_SAME_FIELD(length, length);
ZY_SAME_FIELD(operand_count, operand_count);
ZY_SAME_FIELD(attributes, attributes);
ZY_SAME_FIELD(category, meta.category);
ZY_SAME_FIELD(branch_type, meta.branch_type);
ZY_SAME_FIELD(disp, raw.disp.value);
ZY_SAME_FIELD(disp_size, raw.disp.size);
ZY_SAME_FIELD(disp_offset, raw.disp.offset);
ZY_SAME_OPERAND_FIELD(size, size);
ZY_SAME_OPERAND_FIELD(type, type);
ZY_SAME_OPERAND_FIELD(mem.type, mem.type);
ZY_SAME_OPERAND_FIELD(mem.segment, mem.segment);
ZY_SAME_OPERAND_FIELD(mem.base, mem.base);
ZY_SAME_OPERAND_FIELD(mem.index, mem.index);
ZY_SAME_OPERAND_FIELD(mem.scale, mem.scale);
ZY_SAME_OPERAND_FIELD(mem.disp, mem.disp.value);
ZY_SAME_OPERAND_FIELD(imm.is_relative, imm.is_relative);
_Static_assert(ZY_MAX_OPERANDS == ZYDIS_MAX_OPERAND_COUNT, "operand count");
_Static_assert(ZY_VERSION_4_0 == ZYDIS_VERSION >> 32, "version");
_Static_assert(ZY_MODE_LONG_64 == ZYDIS_MACHINE_MODE_LONG_64 && ZY_STACK_WIDTH_64 == ZYDIS_STACK_WIDTH_64, "mode");
_Static_assert(ZY_MNEMONIC_CALL == ZYDIS_MNEMONIC_CALL && ZY_MNEMONIC_JMP == ZYDIS_MNEMONIC_JMP &&
               ZY_MNEMONIC_DIV == ZYDIS_MNEMONIC_DIV && ZY_MNEMONIC_IDIV == ZYDIS_MNEMONIC_IDIV, "mnemonics");
_Static_assert(ZY_REG_NONE == ZYDIS_REGISTER_NONE && ZY_REG_RAX == ZYDIS_REGISTER_RAX &&
               ZY_REG_R15 == ZYDIS_REGISTER_R15 && ZY_REG_R15 - ZY_REG_RAX == ZYDIS_REGISTER_R15 - ZYDIS_REGISTER_RAX &&
               ZYDIS_REGISTER_RCX == ZY_REG_RAX + 1 && ZYDIS_REGISTER_RDI == ZY_REG_RAX + 7 &&
               ZY_REG_EIP == ZYDIS_REGISTER_EIP && ZY_REG_RIP == ZYDIS_REGISTER_RIP &&
               ZY_REG_FS == ZYDIS_REGISTER_FS && ZY_REG_GS == ZYDIS_REGISTER_GS, "registers");
_Static_assert(ZY_OPERAND_MEMORY == ZYDIS_OPERAND_TYPE_MEMORY && ZY_OPERAND_IMMEDIATE == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
               ZY_MEMOP_MEM == ZYDIS_MEMOP_TYPE_MEM && ZY_BRANCH_NEAR == ZYDIS_BRANCH_TYPE_NEAR, "operand kinds");
_Static_assert(ZY_ATTRIB_ANY_REP == (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE | ZYDIS_ATTRIB_HAS_REPNE), "rep");
_Static_assert(ZY_CAT_CALL == ZYDIS_CATEGORY_CALL && ZY_CAT_COND_BR == ZYDIS_CATEGORY_COND_BR &&
               ZY_CAT_INTERRUPT == ZYDIS_CATEGORY_INTERRUPT && ZY_CAT_IO == ZYDIS_CATEGORY_IO &&
               ZY_CAT_IOSTRINGOP == ZYDIS_CATEGORY_IOSTRINGOP && ZY_CAT_RET == ZYDIS_CATEGORY_RET &&
               ZY_CAT_SEGOP == ZYDIS_CATEGORY_SEGOP && ZY_CAT_SGX == ZYDIS_CATEGORY_SGX &&
               ZY_CAT_SYSCALL == ZYDIS_CATEGORY_SYSCALL && ZY_CAT_SYSRET == ZYDIS_CATEGORY_SYSRET &&
               ZY_CAT_SYSTEM == ZYDIS_CATEGORY_SYSTEM && ZY_CAT_UINTR == ZYDIS_CATEGORY_UINTR &&
               ZY_CAT_UNCOND_BR == ZYDIS_CATEGORY_UNCOND_BR, "categories");
#endif

static struct {
    int ready;
    struct zy_decoder decoder;
    uint32_t (*decode)(const struct zy_decoder *, const void *, size_t, struct zy_insn *, struct zy_operand *);
    struct { uintptr_t bias, start, end; } object[8]; /* what dlopen brought in for it: never traced */
    int nobjects;
} zy;

/* Called for every loaded object; those past the count taken before the dlopen are what it brought in. */
static int note_new_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    int *index = arg;
    if ((*index)-- > 0 || zy.nobjects == (int)(sizeof zy.object / sizeof zy.object[0])) return 0;
    uintptr_t start = UINTPTR_MAX, end = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        if (info->dlpi_addr + ph->p_vaddr < start) start = info->dlpi_addr + ph->p_vaddr;
        if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > end) end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    }
    zy.object[zy.nobjects].bias = info->dlpi_addr;
    zy.object[zy.nobjects].start = start;
    zy.object[zy.nobjects].end = end;
    zy.nobjects++;
    return 0;
}
static int count_object(struct dl_phdr_info *info, size_t size, void *arg) { ++*(int *)arg; return 0; }

/* Zydis calls memset and memcpy: those bind to our wrappers, which serve calls from inside our handlers */
/* with the agent's own loops.                                                                          */
static void zydis_load(void)
{
    int before = 0;
    dl_iterate_phdr(count_object, &before);
    void *h = real.dlopen("libZydis.so.4.0", RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    dl_iterate_phdr(note_new_object, &before);
    typedef uint32_t (*init_fn)(struct zy_decoder *, int, int);
    uint64_t (*version)(void) = (uint64_t (*)(void))dlsym(h, "ZydisGetVersion");
    init_fn init = (init_fn)dlsym(h, "ZydisDecoderInit");
    zy.decode = (typeof(zy.decode))dlsym(h, "ZydisDecoderDecodeFull");
    if (!version || !init || !zy.decode || version() >> 32 != ZY_VERSION_4_0) return;
    if (ZY_FAILED(init(&zy.decoder, ZY_MODE_LONG_64, ZY_STACK_WIDTH_64))) return;
    zy.ready = 1;
}

/* ------------------------------------------------------------------------------------------------ */
/* The code cache: how each faulting instruction runs, and out-of-line copies of those that can      */

enum { RUN_TRAP, RUN_OOL, RUN_JMP, RUN_CALL };

struct insn {
    uintptr_t ip;                /* key, 0 while free; stored last, so a reader sees a complete entry */
    unsigned char *slot;         /* RUN_OOL: the copy */
    unsigned char bytes[15];     /* as decoded: other bytes at ip mean other code, which takes the trap */
    uint8_t len, how;
    int8_t base, index;          /* RUN_JMP/RUN_CALL: gregs of the memory operand, -1 for none */
    uint8_t scale;
    int64_t disp;                /* ...and its displacement (the absolute address when RIP-relative) */
};

#define CACHE_BITS 16
#define SLOT_SIZE 32             /* the instruction (<= 15 bytes), jmp *0(%rip) (6) and the stub's address (8) */
#define CHUNK_SIZE (1UL << 20)
#define MAX_CHUNKS 64

static struct {
    spinlock lock;               /* adding entries and slots; lookups take no lock */
    struct insn *table;
    int used;
    struct { unsigned char *base; size_t used; } chunk[MAX_CHUNKS];
    int nchunks;
} cc;

void mt_ool_return(void) __attribute__((visibility("hidden")));

/* REG_* for Zydis's RAX..R15 */
static const int8_t gpr_greg[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
                                    REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};

static unsigned cache_hash(uintptr_t ip) { return (unsigned)((ip * 0x9E3779B97F4A7C15ULL) >> (64 - CACHE_BITS)); }

static struct insn *cache_find(uintptr_t ip)
{
    for (unsigned i = cache_hash(ip);; i = (i + 1) & ((1u << CACHE_BITS) - 1)) {
        uintptr_t k = __atomic_load_n(&cc.table[i].ip, __ATOMIC_ACQUIRE);
        if (k == ip) return &cc.table[i];
        if (!k) return NULL;
    }
}

/* A chunk of code cache near `ip` (below it: above an executable lies its heap, which must stay free   */
/* to grow), so that RIP-relative operands stay within reach of a 32-bit displacement.                 */
static unsigned char *map_chunk_near(uintptr_t ip)
{
    for (uintptr_t d = CHUNK_SIZE; d <= (1UL << 30); d *= 2) {
        uintptr_t hint = (ip & ~(CHUNK_SIZE - 1)) - d;
        if (hint > ip || hint < 0x100000) return NULL;
        long p = mt_sys6(SYS_mmap, (long)hint, CHUNK_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if ((uintptr_t)p == hint) return (unsigned char *)p;
        if (!(p < 0 && p > -4096)) mt_sys2(SYS_munmap, p, CHUNK_SIZE); /* a kernel that took the hint loosely */
    }
    return NULL;
}

static int within_rel32(uintptr_t from, uintptr_t to)
{
    int64_t d = (int64_t)(to - from);
    return d == (int32_t)d;
}

/* A free slot whose copy of a `len`-byte instruction can still reach `target` (when `rel`). Cache lock. */
static unsigned char *slot_alloc(uintptr_t ip, int rel, uintptr_t target, int len)
{
    for (int i = cc.nchunks - 1; i >= 0; i--) {
        unsigned char *s = cc.chunk[i].base + cc.chunk[i].used;
        if (cc.chunk[i].used + SLOT_SIZE <= CHUNK_SIZE && (!rel || within_rel32((uintptr_t)s + len, target))) {
            cc.chunk[i].used += SLOT_SIZE;
            return s;
        }
    }
    if (cc.nchunks == MAX_CHUNKS) return NULL;
    unsigned char *base = map_chunk_near(ip);
    if (!base) return NULL;
    cc.chunk[cc.nchunks].base = base;
    cc.chunk[cc.nchunks].used = 0;
    cc.nchunks++;
    if (rel && !within_rel32((uintptr_t)base + len, target)) return NULL;
    cc.chunk[cc.nchunks - 1].used = SLOT_SIZE;
    return base;
}

/* The copy: the instruction (a RIP-relative displacement rewritten for the new place), then a jump to  */
/* the common return stub. Cache lock held.                                                            */
static unsigned char *build_slot(uintptr_t ip, const struct zy_insn *in, int rel)
{
    uintptr_t target = ip + in->length + (uintptr_t)in->disp;
    if (rel && (in->disp_size != 32 || in->disp_offset + 4 > in->length)) return NULL;
    unsigned char *s = slot_alloc(ip, rel, target, in->length);
    if (!s) return NULL;
    mt_memcpy(s, (const void *)ip, in->length);
    if (rel) {
        int32_t d = (int32_t)(target - ((uintptr_t)s + in->length));
        mt_memcpy(s + in->disp_offset, &d, 4);
    }
    static const unsigned char jmp_via_next_quad[6] = {0xff, 0x25, 0, 0, 0, 0};
    mt_memcpy(s + in->length, jmp_via_next_quad, 6);
    uint64_t stub = (uintptr_t)mt_ool_return;
    mt_memcpy(s + in->length + 6, &stub, 8);
    return s;
}

static int greg_of(uint32_t zreg)
{
    if (zreg == ZY_REG_NONE) return -1;
    return zreg >= ZY_REG_RAX && zreg <= ZY_REG_R15 ? gpr_greg[zreg - ZY_REG_RAX] : -2;
}

/* jmp/call through a 64-bit memory operand (a PLT stub reading the GOT): emulated, if its address is  */
/* computable from the general registers.                                                             */
static int branch_through_memory(uintptr_t ip, const struct zy_insn *in, const struct zy_operand *op, struct insn *e)
{
    const struct zy_operand *m = &op[0];
    if ((in->mnemonic != ZY_MNEMONIC_JMP && in->mnemonic != ZY_MNEMONIC_CALL) || in->branch_type != ZY_BRANCH_NEAR ||
        m->type != ZY_OPERAND_MEMORY || m->mem.type != ZY_MEMOP_MEM || m->size != 64 ||
        m->mem.segment == ZY_REG_FS || m->mem.segment == ZY_REG_GS)
        return RUN_TRAP;
    e->disp = m->mem.disp;
    if (m->mem.base == ZY_REG_RIP) {
        e->base = -1;
        e->disp += (int64_t)(ip + in->length);
    } else {
        e->base = (int8_t)greg_of(m->mem.base);
    }
    e->index = (int8_t)greg_of(m->mem.index);
    e->scale = m->mem.scale;
    if (e->base == -2 || e->index == -2) return RUN_TRAP;
    return in->mnemonic == ZY_MNEMONIC_JMP ? RUN_JMP : RUN_CALL;
}

/* How the instruction runs. Out of line unless it reads RIP other than through a RIP-relative operand  */
/* (branches, calls, system instructions), repeats (rep: one record per iteration, as the CPU faults),  */
/* or can raise #DE (the program's SIGFPE handler would see the copy's address).                        */
static int classify(uintptr_t ip, const struct zy_insn *in, const struct zy_operand *op, struct insn *e, int *rel)
{
    switch (in->category) {
    case ZY_CAT_CALL: case ZY_CAT_COND_BR: case ZY_CAT_INTERRUPT: case ZY_CAT_IO: case ZY_CAT_IOSTRINGOP:
    case ZY_CAT_RET: case ZY_CAT_SEGOP: case ZY_CAT_SGX: case ZY_CAT_SYSCALL: case ZY_CAT_SYSRET:
    case ZY_CAT_SYSTEM: case ZY_CAT_UINTR: case ZY_CAT_UNCOND_BR:
        return branch_through_memory(ip, in, op, e);
    }
    if ((in->attributes & ZY_ATTRIB_ANY_REP) || in->mnemonic == ZY_MNEMONIC_DIV || in->mnemonic == ZY_MNEMONIC_IDIV)
        return RUN_TRAP;
    *rel = 0;
    for (int i = 0; i < in->operand_count && i < ZY_MAX_OPERANDS; i++) {
        if (op[i].type == ZY_OPERAND_IMMEDIATE && op[i].imm.is_relative) return RUN_TRAP;
        if (op[i].type == ZY_OPERAND_MEMORY && op[i].mem.base == ZY_REG_EIP) return RUN_TRAP;
        if (op[i].type == ZY_OPERAND_MEMORY && op[i].mem.base == ZY_REG_RIP) *rel = 1;
    }
    return RUN_OOL;
}

/* Decodes the instruction at ip and enters it in the cache; NULL when the cache is full. */
static struct insn *cache_add(uintptr_t ip)
{
    struct zy_insn in;
    struct zy_operand op[ZY_MAX_OPERANDS];
    int ok = !ZY_FAILED(zy.decode(&zy.decoder, (const void *)ip, 15, &in, op)); /* reads no further than the insn */
    spin_lock(&cc.lock);
    struct insn *e = cache_find(ip);
    if (e || cc.used >= 3 << (CACHE_BITS - 2)) {
        spin_unlock(&cc.lock);
        return e;
    }
    unsigned i = cache_hash(ip);
    while (cc.table[i].ip) i = (i + 1) & ((1u << CACHE_BITS) - 1);
    e = &cc.table[i];
    e->how = RUN_TRAP;
    e->len = 0;
    if (ok) {
        int rel = 0;
        e->len = in.length;
        mt_memcpy(e->bytes, (const void *)ip, in.length);
        e->how = (uint8_t)classify(ip, &in, op, e, &rel);
        if (e->how == RUN_OOL && !(e->slot = build_slot(ip, &in, rel))) e->how = RUN_TRAP;
    }
    cc.used++;
    __atomic_store_n(&e->ip, ip, __ATOMIC_RELEASE);
    spin_unlock(&cc.lock);
    return e;
}

/* The cache entry for the instruction at ip, or NULL: take the trap. */
static struct insn *cache_lookup(uintptr_t ip)
{
    if (!zy.ready) return NULL;
    struct insn *e = cache_find(ip);
    if (!e) e = cache_add(ip);
    if (!e) return NULL;
    for (int i = 0; i < e->len; i++)
        if (e->bytes[i] != ((const unsigned char *)ip)[i]) return NULL;
    return e;
}

static void ool_init(void)
{
    cc.table = agent_map(sizeof(struct insn) << CACHE_BITS);
    if (!cc.table) return;
    /* dlopen's allocations come from the boot arena: the program's heap starts where it would untraced. */
    hooks_ready = 0;
    zydis_load();
    hooks_ready = 1;
}

/* ------------------------------------------------------------------------------------------------ */
/* Modules and the memory map                                                                       */

struct map_line {
    uintptr_t start, end, offset;
    int prot;
    int is_private;
    char path[256];
};

/* A hexadecimal field of a maps line, up to `stop`; *p is left at the stop character. */
static uintptr_t parse_hex(char **p, char stop)
{
    char *c = *p;
    uintptr_t v = 0;
    for (; *c && *c != stop; c++) v = v * 16 + (uintptr_t)(*c <= '9' ? *c - '0' : (*c | 32) - 'a' + 10);
    *p = c;
    return v;
}

/* Calls fn for each /proc/self/maps line; the file is read with raw syscalls into a private buffer. */
static void for_each_map(void (*fn)(const struct map_line *, void *), void *arg)
{
    int fd = (int)mt_sys3(SYS_open, "/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return;
    size_t cap = 1 << 20;
    char *buf = agent_map(cap);
    if (!buf) { mt_sys1(SYS_close, fd); return; }
    size_t len = 0;
    for (;;) {
        long n = mt_sys3(SYS_read, fd, buf + len, cap - len - 1);
        if (n <= 0) break;
        len += (size_t)n;
        if (len >= cap - 1) break;
    }
    mt_sys1(SYS_close, fd);
    buf[len] = 0;
    char *p = buf;
    while (*p) {
        struct map_line m;
        mt_memzero(&m, sizeof m);
        m.start = parse_hex(&p, '-'); p++;
        m.end = parse_hex(&p, ' '); p++;
        m.prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) | (p[2] == 'x' ? PROT_EXEC : 0);
        m.is_private = p[3] == 'p';
        p += 5;
        m.offset = parse_hex(&p, ' ');
        for (int f = 0; f < 2; f++) { while (*p == ' ') p++; while (*p && *p != ' ') p++; } /* dev, inode */
        while (*p == ' ') p++;
        size_t k = 0;
        while (*p && *p != '\n') { if (k < sizeof m.path - 1) m.path[k++] = *p; p++; }
        if (*p) p++;
        fn(&m, arg);
    }
    mt_sys2(SYS_munmap, buf, cap);
}

/* Non-executable PT_LOAD spans of the loaded objects other than the agent and the dynamic loader:   */
/* the memory the DATA region means (data, bss, relro, rodata).                                      */
struct span { uintptr_t s, e; };
static struct span data_spans[512];
static int ndata_spans;
static uintptr_t ldso_base;

static int is_excluded_object(struct dl_phdr_info *info)
{
    if (info->dlpi_addr == ldso_base && ldso_base) return 1;
    const char *n = info->dlpi_name;
    if (n && n[0] && mt_strncmp(n, g.self_path, sizeof g.self_path) == 0) return 1;
    if (n && mt_strncmp(n, "linux-vdso", 10) == 0) return 1;
    for (int i = 0; i < zy.nobjects; i++)
        if (info->dlpi_addr == zy.object[i].bias) return 1;
    for (int i = 0; i < info->dlpi_phnum; i++) /* the dynamic loader, by its own PT_LOAD at ldso_base */
        if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_addr + info->dlpi_phdr[i].p_vaddr == ldso_base)
            return 1;
    return 0;
}

static int collect_spans(struct dl_phdr_info *info, size_t size, void *arg)
{
    if (is_excluded_object(info)) return 0;
    for (int i = 0; i < info->dlpi_phnum && ndata_spans < 512; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || (ph->p_flags & PF_X)) continue;
        data_spans[ndata_spans++] = (struct span){page_down(info->dlpi_addr + ph->p_vaddr),
                                                  page_up(info->dlpi_addr + ph->p_vaddr + ph->p_memsz)};
    }
    return 0;
}

static int in_data_span(uintptr_t s, uintptr_t e)
{
    for (int i = 0; i < ndata_spans; i++)
        if (data_spans[i].s <= s && e <= data_spans[i].e) return 1;
    return 0;
}

static void report_mapping(const struct map_line *m, void *arg)
{
    int *initial = arg;
    int traced = 0;
    int is_ring = m->start == (uintptr_t)g.ring;
    if (!is_ring && !(m->prot & PROT_EXEC) && (m->prot & (PROT_READ | PROT_WRITE))) {
        int kind = 0;
        if (in_data_span(m->start, m->end)) kind = MT_REGION_DATA;
        else if (mt_strncmp(m->path, "[heap]", 7) == 0) kind = MT_REGION_HEAP;
        if (kind && *initial && !set_find(m->start)) {
            set_add_locked(m->start, m->end, m->prot, kind);
        }
        traced = set_find(m->start) != NULL;
    }
    REC(MT_MAPPING, struct mt_mapping, r);
    r.h.flags = traced ? MT_MAP_TRACED : 0;
    r.start = m->start;
    r.end = m->end;
    r.offset = m->offset;
    r.prot = (uint32_t)m->prot;
    size_t n = mt_strlen(m->path);
    r.path_len = (uint32_t)n;
    emit_with_tail(&r, sizeof r, NULL, 0, m->path, n);
}

static int report_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    int *index = arg;
    if ((*index)++ < g.reported_modules) return 0;
    char exe[512];
    const char *name = mt_module_name(info, exe, sizeof exe);
    uint32_t bid_len;
    const unsigned char *bid = mt_build_id(info, &bid_len);
    REC(MT_MODULE, struct mt_module, r);
    r.load_bias = info->dlpi_addr;
    r.build_id_len = bid_len;
    size_t n = mt_strlen(name);
    r.path_len = (uint32_t)n;
    emit_with_tail(&r, sizeof r, bid, bid_len, name, n);
    return 0;
}

/* Reports modules loaded since the last call and, when asked, adds their data to the traced set. */
static void scan_new_modules(int initial)
{
    int index = 0;
    ndata_spans = 0;
    dl_iterate_phdr(collect_spans, NULL);
    dl_iterate_phdr(report_module, &index);
    g.reported_modules = index;
    uint64_t old = block_signals();
    spin_lock(&g.lock);
    for_each_map(report_mapping, &initial);
    spin_unlock(&g.lock);
    restore_signals(old);
}

/* ------------------------------------------------------------------------------------------------ */
/* Recording on and off                                                                             */

static void control(int start, uintptr_t caller)
{
    if (!g.active) return;
    uint64_t old = block_signals();
    spin_lock(&g.lock);
    if (start != g.recording) {
        g.recording = start;
        protect_all_locked(start);
    }
    spin_unlock(&g.lock);
    restore_signals(old);
    REC(MT_CONTROL, struct mt_control, c);
    c.h.flags = start ? MT_CTL_START : MT_CTL_STOP;
    c.caller = caller;
    emit(&c);
}

EXPORT void memtrace_start(void) { control(1, (uintptr_t)__builtin_return_address(0)); }
EXPORT void memtrace_stop(void) { control(0, (uintptr_t)__builtin_return_address(0)); }
EXPORT void MadT__start(void) { control(1, (uintptr_t)__builtin_return_address(0)); }
EXPORT void MadT__stop(void) { control(0, (uintptr_t)__builtin_return_address(0)); }

/* ------------------------------------------------------------------------------------------------ */
/* Signals                                                                                          */

static void set_kernel_action(int sig, void *handler, unsigned long flags, uint64_t mask)
{
    struct ksigaction a = {handler, flags | KSA_RESTORER, (void *)mt_restorer, mask};
    mt_sys4(SYS_rt_sigaction, sig, &a, 0, 8);
}

#define ALT_STACK_SIZE (256 * 1024)
#define OOL_STACK_SIZE (32 * 1024)
/* This thread's alternate stack for the agent's handlers, and below it the stack mt_ool_return calls  */
/* C on: a program close to overflowing its stack must not overflow it inside the agent, with a lock  */
/* held. Mapped once per thread, kept until the process ends.                                          */
static int give_alt_stack(void)
{
    if (!ts.alt.ss_sp) {
        unsigned char *p = agent_map(OOL_STACK_SIZE + ALT_STACK_SIZE);
        if (!p) return 0;
        mt_ool_stack = (uintptr_t)p + OOL_STACK_SIZE;
        ts.alt = (stack_t){.ss_sp = p + OOL_STACK_SIZE, .ss_flags = 0, .ss_size = ALT_STACK_SIZE};
    }
    return 1;
}

/* The pages of this thread's step lose their rights again. Lock not held. */
static void close_step_pages(void)
{
    spin_lock(&g.lock);
    for (int i = 0; i < ts.nstep; i++) close_locked(ts.step_pages[i], ts.step_pages[i] + g.page);
    spin_unlock(&g.lock);
    ts.nstep = 0;
}

/* Ends the step of this thread from a signal handler (the trap, or a signal we forward mid-step). */
static void end_step(ucontext_t *uc)
{
    greg_t *gr = uc->uc_mcontext.gregs;
    close_step_pages();
    if (ts.stepping == STEP_TRAP) gr[REG_EFL] &= ~EFLAGS_TF;
    /* The copy faulted and did nothing: the program sees the fault at its own instruction. */
    if (ts.stepping == STEP_OOL && (uintptr_t)gr[REG_RIP] == ts.ool_slot) gr[REG_RIP] = (greg_t)ts.ool_ip;
    ts.stepping = STEP_NONE;
    mt_memcpy(&uc->uc_sigmask, &ts.step_saved_mask, 8);
    count(&g.steps);
}

/* Ends an out-of-line step: mt_ool_return calls it after the copy ran, on the program's stack with     */
/* asynchronous signals still blocked. The mask goes back last, so a signal can only arrive once the    */
/* step is over; the stub has already saved where to resume.                                            */
__attribute__((used)) static uintptr_t ool_finish(void)
{
    uintptr_t resume = ts.ool_resume;
    uint64_t mask = ts.step_saved_mask;
    close_step_pages();
    ts.stepping = STEP_NONE;
    count(&g.steps);
    mt_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &mask, 0, 8);
    return resume;
}

/* Where every out-of-line copy jumps after its instruction. It starts on the program's stack: steps    */
/* over the red zone, keeps a slot for the resume address, saves the flags and the registers the C ABI  */
/* lets ool_finish clobber there, then moves to the thread's OOL stack (if it has one) to save the     */
/* x87/SSE state (the agent is built without AVX, so the upper halves of the */
/* vector registers are never touched), and leaves with ret $128: the program's registers, flags and    */
/* stack pointer exactly as the instruction left them.                                                   */
__asm__(".text\n"
        ".globl mt_ool_return\n"
        ".hidden mt_ool_return\n"
        ".type mt_ool_return, @function\n"
        ".p2align 4\n"
        "mt_ool_return:\n"
        "\tendbr64\n"
        "\tlea -136(%rsp), %rsp\n"
        "\tpushfq\n"
        "\tpush %rax\n\tpush %rcx\n\tpush %rdx\n\tpush %rsi\n\tpush %rdi\n"
        "\tpush %r8\n\tpush %r9\n\tpush %r10\n\tpush %r11\n\tpush %rbx\n"
        "\tmov %rsp, %rbx\n"
        "\tmov mt_ool_stack@gottpoff(%rip), %rax\n"
        "\tmov %fs:(%rax), %rax\n"
        "\ttest %rax, %rax\n"
        "\tjz 1f\n"
        "\tmov %rax, %rsp\n"
        "1:\n"
        "\tand $-16, %rsp\n"
        "\tsub $512, %rsp\n"
        "\tfxsave64 (%rsp)\n"
        "\tcld\n"
        "\tcall ool_finish\n"
        "\tmov %rax, 88(%rbx)\n" /* the slot above the flags: 10 registers + flags = 88 bytes */
        "\tfxrstor64 (%rsp)\n"
        "\tmov %rbx, %rsp\n"
        "\tpop %rbx\n\tpop %r11\n\tpop %r10\n\tpop %r9\n\tpop %r8\n"
        "\tpop %rdi\n\tpop %rsi\n\tpop %rdx\n\tpop %rcx\n\tpop %rax\n"
        "\tpopfq\n"
        "\tret $128\n"
        ".size mt_ool_return, . - mt_ool_return\n");

/* A signal that is not the agent's business: give it to the program's handler, or die of it. */
static void forward(int sig, siginfo_t *si, ucontext_t *uc)
{
    if (ts.stepping) end_step(uc);
    struct ksigaction *a = &g.app_action[sig];
    if (a->handler != SIG_DFL && a->handler != SIG_IGN) {
        void *h = a->handler;
        unsigned long flags = a->flags;
        if (flags & SA_RESETHAND) a->handler = SIG_DFL;
        /* The program's handler is program code (it may even siglongjmp away): not our handler. */
        int depth = ts.in_handler;
        ts.in_handler = 0;
        if (flags & SA_SIGINFO) ((void (*)(int, siginfo_t *, void *))h)(sig, si, uc);
        else ((void (*)(int))h)(sig);
        ts.in_handler = depth;
        return;
    }
    /* Default action: the program dies of this signal. Say so in the stream first. */
    /* Only a fault has an address (0 for a null pointer); a signal sent with kill() carries the sender's */
    /* pid there, so it is reported as "no address": all ones. */
    uint64_t fault_address = si->si_code > 0 ? (uint64_t)si->si_addr : ~0ULL;
    emit_stats_and_exit(MT_EXIT_SIGNAL, (uint64_t)sig, (uint64_t)uc->uc_mcontext.gregs[REG_RIP], fault_address, NULL);
    set_kernel_action(sig, SIG_DFL, 0, 0);
    uint64_t m;
    mt_memcpy(&m, &uc->uc_sigmask, 8);
    m &= ~sigbit(sig);
    mt_memcpy(&uc->uc_sigmask, &m, 8);
    mt_sys3(SYS_tgkill, g.pid, mytid(), sig);
}

/* Our handlers mark the thread as inside one of them: emit() then knows signals are blocked already. */
#define SIGNAL_HANDLER(name, body) \
    static void name(int sig, siginfo_t *si, void *ucv) \
    { \
        ts.in_handler++; \
        body(sig, si, ucv); \
        ts.in_handler--; \
    }

static void segv_access(int sig, siginfo_t *si, void *ucv);
static void begin_step(ucontext_t *uc, uintptr_t addr);
SIGNAL_HANDLER(on_segv, segv_access)

static void segv_access(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    uintptr_t addr = (uintptr_t)si->si_addr;
    if (!g.active || si->si_code != SEGV_ACCERR) { forward(sig, si, uc); return; }
    if (uc->uc_mcontext.gregs[REG_ERR] & PF_FETCH_BIT) { forward(sig, si, uc); return; }
    if (ts.dispatch_on && ts.selector == SUD_ALLOW && !ts.native_pending) ts.selector = SUD_BLOCK;
    int write = (uc->uc_mcontext.gregs[REG_ERR] & PF_WRITE_BIT) != 0;
    spin_lock(&g.lock);
    struct range *r = set_find(addr);
    if (r && !g.recording && (r->prot & (write ? PROT_WRITE : PROT_READ))) {
        /* raised just before memtrace_stop gave the page its rights back: the access can simply run */
        spin_unlock(&g.lock);
        return;
    }
    if (!r || !g.recording || !(r->prot & (write ? PROT_WRITE : PROT_READ))) {
        spin_unlock(&g.lock);
        forward(sig, si, uc);
        return;
    }
    uintptr_t page = page_down(addr);
    if (ts.untraced) { /* the allocator or a block operation working for the program */
        if (ts.nlazy == (int)(sizeof ts.lazy_pages / sizeof ts.lazy_pages[0])) {
            /* a big job: close what it opened so far; it faults again where it still needs to go */
            for (int i = 0; i < ts.nlazy; i++) close_locked(ts.lazy_pages[i], ts.lazy_pages[i] + g.page);
            ts.nlazy = 0;
        }
        open_locked(page, page + g.page);
        ts.lazy_pages[ts.nlazy++] = page;
        count(&g.untraced_faults);
        spin_unlock(&g.lock);
        return;
    }
    if (ts.nstep == (int)(sizeof ts.step_pages / sizeof ts.step_pages[0])) {
        spin_unlock(&g.lock);
        forward(sig, si, uc);
        return;
    }
    open_locked(page, page + g.page);
    spin_unlock(&g.lock);
    ts.step_pages[ts.nstep++] = page;
    count(&g.faults);
    REC(MT_ACCESS, struct mt_access, a);
    a.h.flags = (uint8_t)((write ? MT_ACC_WRITE : 0) | (ts.stepping ? MT_ACC_SAME_STEP : 0));
    a.ip = ts.stepping == STEP_OOL ? ts.ool_ip : (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    a.addr = addr;
    emit(&a);
    if (!ts.stepping) begin_step(uc, addr);
}

/* The operand address of an emulated jmp/call: 8 bytes within the faulting page, or 0 (let the CPU    */
/* fault on each page, as it does with the trap).                                                      */
static uintptr_t branch_operand(const struct insn *e, const greg_t *gr, uintptr_t addr)
{
    uintptr_t ea = (uintptr_t)e->disp;
    if (e->base >= 0) ea += (uintptr_t)gr[e->base];
    if (e->index >= 0) ea += (uintptr_t)gr[e->index] * e->scale;
    return page_down(ea) == page_down(addr) && page_down(ea + 7) == page_down(addr) ? ea : 0;
}

/* jmp/call through traced memory: read the target while the page is open, push the return address,   */
/* and the instruction is done without running it. 0 when it must run after all.                       */
static int emulate_branch(ucontext_t *uc, const struct insn *e, uintptr_t addr)
{
    greg_t *gr = uc->uc_mcontext.gregs;
    uintptr_t ea = branch_operand(e, gr, addr);
    if (!ea) return 0;
    uintptr_t ret_at = (uintptr_t)gr[REG_RSP] - 8;
    if (e->how == RUN_CALL) {
        /* Traced memory under the stack pointer would have to fault: let it. */
        spin_lock(&g.lock);
        int traced = set_find(ret_at) != NULL;
        spin_unlock(&g.lock);
        if (traced) return 0;
    }
    uint64_t target = *(const volatile uint64_t *)ea;
    /* Our handlers run on an alternate stack. A push within the page the stack pointer is in is a plain */
    /* store; one onto the page below goes through the kernel, which answers an overflowing stack with   */
    /* an error instead of a fault here, and then the instruction runs after all.                       */
    uint64_t back = (uint64_t)gr[REG_RIP] + e->len;
    if (e->how == RUN_CALL) {
        if (page_down(ret_at) == page_down((uintptr_t)gr[REG_RSP])) *(volatile uint64_t *)ret_at = back;
        else if (user_transfer(&back, ret_at, 8, 1)) return 0;
    }
    close_step_pages();
    count(&g.steps);
    if (e->how == RUN_CALL) gr[REG_RSP] = (greg_t)ret_at;
    gr[REG_RIP] = (greg_t)target;
    return 1;
}

/* The first fault of an instruction: its page is open; now let the instruction run, with asynchronous */
/* signals blocked until it is done. Emulated, out of line, or with the trap flag.                      */
static void begin_step(ucontext_t *uc, uintptr_t addr)
{
    greg_t *gr = uc->uc_mcontext.gregs;
    uintptr_t ip = (uintptr_t)gr[REG_RIP];
    struct insn *e = cache_lookup(ip);
    if (e && (e->how == RUN_JMP || e->how == RUN_CALL) && emulate_branch(uc, e, addr)) return;
    mt_memcpy(&ts.step_saved_mask, &uc->uc_sigmask, 8);
    uint64_t only_sync = ~(OUR_SIGNALS | sigbit(SIGBUS) | sigbit(SIGFPE) | sigbit(SIGILL));
    mt_memcpy(&uc->uc_sigmask, &only_sync, 8);
    if (e && e->how == RUN_OOL) {
        ts.stepping = STEP_OOL;
        ts.ool_ip = ip;
        ts.ool_slot = (uintptr_t)e->slot;
        ts.ool_resume = ip + e->len;
        gr[REG_RIP] = (greg_t)e->slot;
    } else {
        ts.stepping = STEP_TRAP;
        gr[REG_EFL] |= EFLAGS_TF;
    }
}

static void enable_dispatch(void);
static void emit_thread(int start, uint64_t value)
{
    REC(MT_THREAD, struct mt_thread, t);
    t.h.flags = start ? MT_THREAD_START : MT_THREAD_EXIT;
    t.value = value;
    emit(&t);
}

static void trap_step(int sig, siginfo_t *si, void *ucv);
SIGNAL_HANDLER(on_trap, trap_step)

static void trap_step(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    greg_t *gr = uc->uc_mcontext.gregs;
    if (ts.native_pending && gr[REG_RAX] != 0) {
        /* back from a syscall we let run natively (the parent side of a clone) */
        ts.native_pending = 0;
        ts.selector = SUD_BLOCK;
        gr[REG_EFL] &= ~EFLAGS_TF;
        if (ts.native_reprotect) {
            ts.native_reprotect = 0;
            spin_lock(&g.lock);
            close_all_locked();
            spin_unlock(&g.lock);
        }
        return;
    }
    if (ts.stepping == STEP_TRAP) {
        end_step(uc);
        return;
    }
    if (si->si_code == TRAP_TRACE && (gr[REG_EFL] & EFLAGS_TF)) {
        /* A new thread created by a natively run clone inherits the trap flag: it lands here first. */
        gr[REG_EFL] &= ~EFLAGS_TF;
        if (ts.native_pending) return; /* a vfork-like child sharing the parent's TLS: leave it alone */
        if (!ts.dispatch_on && g.active) {
            ts.tid = 0;
            __atomic_add_fetch(&g.threads, 1, __ATOMIC_RELAXED);
            enable_dispatch();
            /* clone(CLONE_VM) left the thread without an alternate stack: ours takes effect at the return */
            if (give_alt_stack()) uc->uc_stack = ts.alt;
            emit_thread(1, (uint64_t)g.clone_parent);
        }
        return;
    }
    forward(sig, si, uc);
}

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

/* Reads program memory that may be protected: opens it for the copy. Lock not held, signals blocked. */
/* Copies between our memory and the program's through the kernel, which answers a bad pointer with     */
/* EFAULT instead of a fault in our handler: the program must see the error an untraced run would see. */
static long user_transfer(void *ours, uintptr_t theirs, size_t n, int to_program)
{
    struct iovec local = {ours, n}, remote = {(void *)theirs, n};
    long r = mt_sys6(to_program ? SYS_process_vm_writev : SYS_process_vm_readv, g.pid, (long)&local, 1,
                  (long)&remote, 1, 0);
    return r == (long)n ? 0 : -EFAULT;
}

/* Reads program memory that may be protected: opens it for the copy. Lock not held, signals blocked.   */
/* On a bad pointer the copy is zeroes and the result -EFAULT.                                          */
static long copy_in(void *dst, uintptr_t src, size_t n)
{
    spin_lock(&g.lock);
    int open = g.recording && set_find(src);
    if (open) open_locked(page_down(src), page_up(src + n));
    spin_unlock(&g.lock);
    long r = user_transfer(dst, src, n, 0);
    if (r) mt_memzero(dst, n);
    if (open) {
        spin_lock(&g.lock);
        close_locked(page_down(src), page_up(src + n));
        spin_unlock(&g.lock);
    }
    return r;
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

/* Collects what the call may read or write into `sp`; sp->all when only opening everything is exact. */
static void describe_syscall(long nr, const long *a, struct spans *sp)
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
        if (b->len == LEN_IOV) {
            add_iov_spans(sp, at, a[b->n]);
        } else if (b->len == LEN_MSGHDR) {
            struct msghdr mh;
            if (!at || copy_in(&mh, at, sizeof mh)) continue;
            add_span(sp, at, sizeof mh);
            add_iov_spans(sp, (uintptr_t)mh.msg_iov, (long)mh.msg_iovlen);
            add_span(sp, (uintptr_t)mh.msg_name, mh.msg_namelen);
            add_span(sp, (uintptr_t)mh.msg_control, mh.msg_controllen);
        } else {
            add_span(sp, at, buf_bytes(b, a));
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
        } else {
            uint64_t n = (uint64_t)ret < buf_bytes(b, a) ? (uint64_t)ret : buf_bytes(b, a);
            if (op == MT_BLK_STORE) emit_block(op, nr, ip, at, 0, n);
            else emit_block(op, nr, ip, 0, at, n);
        }
    }
}

static long do_fork_like(long nr, long *a, ucontext_t *uc)
{
    /* A new process gets a copy of our memory: give everything its rights back first so the child   */
    /* starts untraced and whole; the parent protects again afterwards.                              */
    spin_lock(&g.lock);
    open_all_locked();
    spin_unlock(&g.lock);
    long ret = mt_sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (ret == 0) {
        g.active = 0;
        g.recording = 0;
        ts.dispatch_on = 0;
        return 0;
    }
    if (ret > 0) {
        REC(MT_FORK, struct mt_fork, f);
        f.child_pid = (uint64_t)ret;
        emit(&f);
    }
    spin_lock(&g.lock);
    close_all_locked();
    spin_unlock(&g.lock);
    return ret;
}

/* Lets the syscall at rip-2 run natively once and regains control with the trap flag afterwards. */
static void run_natively(ucontext_t *uc, int reprotect)
{
    greg_t *gr = uc->uc_mcontext.gregs;
    if (reprotect) {
        spin_lock(&g.lock);
        open_all_locked();
        spin_unlock(&g.lock);
    }
    ts.native_pending = 1;
    ts.native_reprotect = reprotect;
    g.clone_parent = mytid();
    ts.selector = SUD_ALLOW;
    gr[REG_RIP] -= 2;
    gr[REG_EFL] |= EFLAGS_TF;
}

static void handle_sigaction(long *a, long *ret)
{
    int sig = (int)a[0];
    struct ksigaction act, old;
    if (sig == SIGSEGV || sig == SIGTRAP || sig == SIGSYS) {
        old = g.app_action[sig];
        if (a[1] && copy_in(&act, (uintptr_t)a[1], sizeof act)) { *ret = -EFAULT; return; }
        if (a[2] && user_transfer(&old, (uintptr_t)a[2], sizeof old, 1)) { *ret = -EFAULT; return; } /* span open */
        if (a[1]) g.app_action[sig] = act;
        *ret = 0;
        return;
    }
    if (a[1]) {
        if (copy_in(&act, (uintptr_t)a[1], sizeof act)) { *ret = -EFAULT; return; }
        if (act.handler != SIG_DFL && act.handler != SIG_IGN) {
            act.flags |= KSA_RESTORER;
            act.restorer = (void *)mt_restorer;
            act.mask &= ~OUR_SIGNALS;
        }
        *ret = mt_sys4(SYS_rt_sigaction, sig, &act, a[2], a[3]);
    } else {
        *ret = mt_sys4(SYS_rt_sigaction, sig, 0, a[2], a[3]);
    }
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
SIGNAL_HANDLER(on_sys, syscall_for_program)

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

    switch (nr) {
    case SYS_rt_sigreturn: /* a handler installed before we could fix its restorer */
        ts.selector = SUD_ALLOW;
        gr[REG_RIP] -= 2;
        return;
    case SYS_clone:
        if (a[0] & CLONE_VM) { run_natively(uc, (a[0] & CLONE_VFORK) != 0); return; }
        if (a[1]) { run_natively(uc, 1); return; } /* a process on its own stack: rare, run natively */
        gr[REG_RAX] = do_fork_like(nr, a, uc);
        return;
    case SYS_clone3: {
        uint64_t flags = 0;
        copy_in(&flags, (uintptr_t)a[0], 8);
        run_natively(uc, (flags & CLONE_VM) == 0 || (flags & CLONE_VFORK) != 0);
        return;
    }
    case SYS_vfork:
        run_natively(uc, 1);
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

    /* Open every traced page the call may read or write for the time of the call. */
    struct spans sp;
    sp.n = 0;
    sp.all = 0;
    spin_lock(&g.lock);
    int recording = g.recording;
    spin_unlock(&g.lock);
    if (recording) {
        describe_syscall(nr, a, &sp);
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

    uintptr_t brk_before = nr == SYS_brk ? (uintptr_t)mt_sys1(SYS_brk, 0) : 0;
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
        ret = mt_sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    }

    if (recording && ret >= 0 && !ts.untraced) /* inside a wrapper the kernel works for the allocator */
        record_syscall(nr, a, ip, ret);

    /* The memory map changed under the traced set: keep the set true to it. */
    if (ret >= 0 || (ret < -4095)) {
        spin_lock(&g.lock);
        switch (nr) {
        case SYS_munmap:
            set_remove_locked(page_down((uintptr_t)a[0]), page_up((uintptr_t)a[0] + (uintptr_t)a[1]), 0);
            break;
        case SYS_mmap:
            if (a[3] & MAP_FIXED)
                set_remove_locked(page_down((uintptr_t)ret), page_up((uintptr_t)ret + (uintptr_t)a[1]), 0);
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
            if ((uintptr_t)ret < brk_before)
                set_remove_locked(page_up((uintptr_t)ret), page_up(brk_before), 0);
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
static void enable_dispatch(void)
{
    ts.selector = SUD_BLOCK;
    long r = mt_sys6(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, (long)g.text_start,
                  (long)(g.text_end - g.text_start), (long)&ts.selector, 0);
    ts.dispatch_on = r == 0;
}

/* Every handler installed before dispatch was on returns through libc's restorer: move it to ours. */
static void adopt_existing_handlers(void)
{
    for (int sig = 1; sig < 65; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP || sig == SIGSEGV || sig == SIGTRAP || sig == SIGSYS) continue;
        struct ksigaction a;
        if (mt_sys4(SYS_rt_sigaction, sig, 0, &a, 8) != 0) continue;
        if (a.handler == SIG_DFL || a.handler == SIG_IGN) continue;
        a.flags |= KSA_RESTORER;
        a.restorer = (void *)mt_restorer;
        a.mask &= ~OUR_SIGNALS;
        mt_sys4(SYS_rt_sigaction, sig, &a, 0, 8);
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* Wrappers                                                                                         */

/* dlsym may allocate before the real allocator is known: serve it from a static arena. */
static unsigned char boot_arena[64 * 1024] __attribute__((aligned(16)));
static size_t boot_used;
static void *boot_alloc(size_t n)
{
    size_t at = (boot_used + 15) & ~(size_t)15;
    if (at + n > sizeof boot_arena) return NULL;
    boot_used = at + n;
    return boot_arena + at;
}
static int is_boot(const void *p) { return (const unsigned char *)p >= boot_arena && (const unsigned char *)p < boot_arena + sizeof boot_arena; }

/* Inside a wrapper: the real function's touches of traced memory open pages without being recorded. */
static int enter_untraced(void)
{
    if (!g.active || ts.untraced) return 0;
    ts.untraced = 1;
    return 1;
}
static void leave_untraced(void)
{
    if (ts.nlazy) {
        uint64_t old = block_signals();
        spin_lock(&g.lock);
        for (int i = 0; i < ts.nlazy; i++) close_locked(ts.lazy_pages[i], ts.lazy_pages[i] + g.page);
        spin_unlock(&g.lock);
        restore_signals(old);
        ts.nlazy = 0;
    }
    ts.untraced = 0;
}

/* A block the allocator returned becomes traced at once. */
static void trace_block(void *p, size_t n)
{
    if (!p || !n || is_boot(p)) return;
    uintptr_t s = page_down((uintptr_t)p), e = page_up((uintptr_t)p + n);
    uint64_t old = block_signals();
    spin_lock(&g.lock);
    if (!set_covers_locked(s, e)) {
        /* Pages already traced keep their entry; only the new part is added. */
        uintptr_t at = s;
        while (at < e) {
            struct range *r = set_find(at);
            if (r) { at = r->end; continue; }
            int i = set_index(at);
            uintptr_t stop = i < g.nset && g.set[i].start < e ? g.set[i].start : e;
            set_add_locked(at, stop, PROT_READ | PROT_WRITE, MT_REGION_HEAP);
            at = stop;
        }
    }
    spin_unlock(&g.lock);
    restore_signals(old);
}

static size_t usable_size(void *p) { return p && !is_boot(p) ? malloc_usable_size(p) : 0; }

static void emit_alloc(int fn, uintptr_t caller, uintptr_t result, uint64_t usable, long a0, long a1, long a2,
                       long a3, long a4, long a5)
{
    REC(MT_ALLOC, struct mt_alloc, r);
    r.h.flags = (uint8_t)fn;
    r.caller = caller;
    r.result = result;
    r.usable = usable;
    r.a[0] = (uint64_t)a0; r.a[1] = (uint64_t)a1; r.a[2] = (uint64_t)a2;
    r.a[3] = (uint64_t)a3; r.a[4] = (uint64_t)a4; r.a[5] = (uint64_t)a5;
    emit(&r);
}

#define CALLER ((uintptr_t)__builtin_return_address(0))
/* The compiler may turn the agent's own struct copies into memcpy/memset calls: those bind to these   */
/* wrappers (we come first in the lookup order) and must not be recorded.                             */
#define FROM_AGENT (CALLER >= g.text_start && CALLER < g.text_end)

/* The end of every allocating wrapper: the block's size is asked while the allocator's touches are still */
/* untraced, then its pages become traced and the call is recorded. */
static void *allocated(int fn, uintptr_t caller, void *p, long a0, long a1, long a2)
{
    size_t u = usable_size(p);
    leave_untraced();
    trace_block(p, u);
    emit_alloc(fn, caller, (uintptr_t)p, u, a0, a1, a2, 0, 0, 0);
    return p;
}

EXPORT void *malloc(size_t n)
{
    if (!hooks_ready) return boot_alloc(n);
    if (!enter_untraced()) return real.malloc(n);
    void *p = real.malloc(n);
    return allocated(MT_FN_MALLOC, CALLER, p, (long)n, 0, 0);
}

EXPORT void *calloc(size_t m, size_t n)
{
    if (!hooks_ready) {
        void *p = boot_alloc(m * n);
        if (p) mt_memzero(p, m * n);
        return p;
    }
    if (!enter_untraced()) return real.calloc(m, n);
    void *p = real.calloc(m, n);
    return allocated(MT_FN_CALLOC, CALLER, p, (long)m, (long)n, 0);
}

EXPORT void *realloc(void *old, size_t n)
{
    if (is_boot(old)) { /* a block from before the allocator was known: move it out */
        void *p = malloc(n);
        if (p) mt_memcpy(p, old, n);
        return p;
    }
    if (!hooks_ready) return boot_alloc(n);
    if (!enter_untraced()) return real.realloc(old, n);
    void *p = real.realloc(old, n);
    return allocated(MT_FN_REALLOC, CALLER, p, (long)old, (long)n, 0);
}

EXPORT void *reallocarray(void *old, size_t m, size_t n)
{
    if (!hooks_ready || is_boot(old)) {
        size_t t;
        return __builtin_mul_overflow(m, n, &t) ? NULL : realloc(old, t);
    }
    if (!enter_untraced()) return real.reallocarray(old, m, n);
    void *p = real.reallocarray(old, m, n);
    return allocated(MT_FN_REALLOCARRAY, CALLER, p, (long)old, (long)m, (long)n);
}

EXPORT void free(void *p)
{
    if (!p || is_boot(p)) return;
    if (!hooks_ready) return;
    if (!enter_untraced()) { real.free(p); return; }
    real.free(p);
    leave_untraced();
    emit_alloc(MT_FN_FREE, CALLER, 0, 0, (long)p, 0, 0, 0, 0, 0);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (!hooks_ready) return 12; /* ENOMEM */
    if (!enter_untraced()) return real.posix_memalign(out, align, n);
    void *p = NULL;
    int rc = real.posix_memalign(&p, align, n);
    size_t u = rc == 0 ? usable_size(p) : 0;
    leave_untraced();
    trace_block(rc == 0 ? p : NULL, u);
    open_span((uintptr_t)out, (uintptr_t)out + sizeof *out, 1);
    if (rc == 0) *out = p;
    open_span((uintptr_t)out, (uintptr_t)out + sizeof *out, 0);
    emit_alloc(MT_FN_POSIX_MEMALIGN, CALLER, rc == 0 ? (uintptr_t)p : 0, u, (long)out, (long)align, (long)n, 0, 0, rc);
    return rc;
}

#define ALIGNED_WRAPPER(name, code, params, args, a0, a1) \
    EXPORT void *name params \
    { \
        if (!hooks_ready) return NULL; \
        if (!enter_untraced()) return real.name args; \
        void *p = real.name args; \
        return allocated(code, CALLER, p, (long)(a0), (long)(a1), 0); \
    }
ALIGNED_WRAPPER(aligned_alloc, MT_FN_ALIGNED_ALLOC, (size_t al, size_t n), (al, n), al, n)
ALIGNED_WRAPPER(memalign, MT_FN_MEMALIGN, (size_t al, size_t n), (al, n), al, n)
ALIGNED_WRAPPER(valloc, MT_FN_VALLOC, (size_t n), (n), n, 0)
ALIGNED_WRAPPER(pvalloc, MT_FN_PVALLOC, (size_t n), (n), n, 0)

/* A file the program maps is announced with its path, so that its region is named after the file. */
static void emit_file_mapping(uintptr_t start, uintptr_t end, int prot, int fd, off_t off)
{
    char link[32] = "/proc/self/fd/", path[256];
    char digits[12];
    int n = 0, at = 14;
    unsigned v = (unsigned)fd;
    do { digits[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n) link[at++] = digits[--n];
    link[at] = 0;
    long len = mt_sys3(SYS_readlink, link, path, sizeof path - 1);
    if (len <= 0) return;
    REC(MT_MAPPING, struct mt_mapping, r);
    r.h.flags = MT_MAP_TRACED;
    r.start = start;
    r.end = end;
    r.offset = (uint64_t)off;
    r.prot = (uint32_t)prot;
    r.path_len = (uint32_t)len;
    emit_with_tail(&r, sizeof r, NULL, 0, path, (size_t)len);
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (!hooks_ready) return (void *)mt_sys6(SYS_mmap, (long)addr, (long)len, prot, flags, fd, off);
    void *p = real.mmap(addr, len, prot, flags, fd, off);
    if (!g.active || ts.untraced) return p;
    if (p != MAP_FAILED && !(flags & MAP_ANONYMOUS) && fd >= 0)
        emit_file_mapping((uintptr_t)p, page_up((uintptr_t)p + len), prot, fd, off);
    if (p != MAP_FAILED) {
        uint64_t old = block_signals();
        spin_lock(&g.lock);
        set_add_locked((uintptr_t)p, page_up((uintptr_t)p + len), prot,
                       (flags & MAP_ANONYMOUS) ? MT_REGION_ANON : MT_REGION_FILE);
        spin_unlock(&g.lock);
        restore_signals(old);
    }
    emit_alloc(MT_FN_MMAP, CALLER, (uintptr_t)p, p == MAP_FAILED ? 0 : page_up(len), (long)addr, (long)len, prot,
               flags, fd, (long)off);
    return p;
}
EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
    __attribute__((alias("mmap")));

EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
    void *want = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        want = va_arg(ap, void *);
        va_end(ap);
    }
    void *p = real.mremap(old, old_len, new_len, flags, want);
    if (g.active && !ts.untraced)
        emit_alloc(MT_FN_MREMAP, CALLER, (uintptr_t)p, p == MAP_FAILED ? 0 : page_up(new_len), (long)old,
                   (long)old_len, (long)new_len, flags, (long)want, 0);
    return p;
}

EXPORT int munmap(void *addr, size_t len)
{
    int rc = real.munmap(addr, len);
    if (g.active && !ts.untraced)
        emit_alloc(MT_FN_MUNMAP, CALLER, (uintptr_t)rc, 0, (long)addr, (long)len, 0, 0, 0, 0);
    return rc;
}

static void emit_call_block(int fn, int op, uintptr_t caller, const void *dst, const void *src, size_t n)
{
    if (!g.recording || !n) return;
    REC(MT_BLOCK, struct mt_block, b);
    b.h.flags = (uint8_t)op;
    b.ip = caller;
    b.dst = (uintptr_t)dst;
    b.src = (uintptr_t)src;
    b.len = n;
    b.what = (uint32_t)fn;
    emit(&b);
}

/* memcpy/memmove called by the program, inside enter_untraced(): one block event. The operation's      */
/* memory is opened as a whole: one mprotect per range, not a fault per page.                          */
static void *block_copy(int fn, uintptr_t caller, void *(*copy)(void *, const void *, size_t), void *d,
                        const void *s, size_t n)
{
    emit_call_block(fn, MT_BLK_COPY, caller, d, s, n);
    open_span((uintptr_t)s, (uintptr_t)s + n, 1);
    open_span((uintptr_t)d, (uintptr_t)d + n, 1);
    void *r = copy(d, s, n);
    open_span((uintptr_t)d, (uintptr_t)d + n, 0);
    open_span((uintptr_t)s, (uintptr_t)s + n, 0);
    leave_untraced();
    return r;
}

/* Inside our own handlers the caller is Zydis decoding for us: libc's versions would read libc's own   */
/* (traced) data there, so those calls get the agent's plain loops.                                     */
EXPORT void *memcpy(void *d, const void *s, size_t n)
{
    if (!hooks_ready || ts.in_handler) { mt_memcpy(d, s, n); return d; }
    if (FROM_AGENT || !enter_untraced()) return real.memcpy(d, s, n);
    return block_copy(MT_FN_MEMCPY, CALLER, real.memcpy, d, s, n);
}

EXPORT void *memmove(void *d, const void *s, size_t n)
{
    if (ts.in_handler) { mt_memmove(d, s, n); return d; }
    if (!hooks_ready) {
        unsigned char tmp[256];
        if (n <= sizeof tmp) { mt_memcpy(tmp, s, n); mt_memcpy(d, tmp, n); }
        return d;
    }
    if (FROM_AGENT || !enter_untraced()) return real.memmove(d, s, n);
    return block_copy(MT_FN_MEMMOVE, CALLER, real.memmove, d, s, n);
}

EXPORT void *memset(void *d, int c, size_t n)
{
    if (!hooks_ready || ts.in_handler) { unsigned char *p = d; for (size_t i = 0; i < n; i++) p[i] = (unsigned char)c; return d; }
    if (FROM_AGENT || !enter_untraced()) return real.memset(d, c, n);
    emit_call_block(MT_FN_MEMSET, MT_BLK_STORE, CALLER, d, NULL, n);
    open_span((uintptr_t)d, (uintptr_t)d + n, 1);
    void *r = real.memset(d, c, n);
    open_span((uintptr_t)d, (uintptr_t)d + n, 0);
    leave_untraced();
    return r;
}

EXPORT void *dlopen(const char *file, int mode)
{
    int mine = enter_untraced();
    void *h = real.dlopen(file, mode);
    if (h && g.active) scan_new_modules(1);
    if (mine) leave_untraced();
    return h;
}

/* At exit every shared object finalizes itself through __cxa_finalize, which walks libc's exit list:  */
/* for the agent and the decoder it loaded, that walk is the agent's doing, not the program's.          */
extern void *__dso_handle;
EXPORT void __cxa_finalize(void *dso)
{
    int ours = dso == &__dso_handle;
    for (int i = 0; i < zy.nobjects; i++)
        if ((uintptr_t)dso >= zy.object[i].start && (uintptr_t)dso < zy.object[i].end) ours = 1;
    int mine = ours && enter_untraced();
    real.cxa_finalize(dso);
    if (mine) leave_untraced();
}

/* ------------------------------------------------------------------------------------------------ */
/* Start-up                                                                                         */

static int (*app_main)(int, char **, char **);

static int main_wrapper(int argc, char **argv, char **envp)
{
    if (g.active && g.autostart) control(1, 0);
    return app_main(argc, argv, envp);
}

EXPORT int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv, void (*init)(void),
                             void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
    app_main = main;
    return real.libc_start_main(main_wrapper, argc, argv, init, fini, rtld_fini, stack_end);
}

/* Takes memtrace's variables and our LD_PRELOAD entry out of the environment, so programs this one   */
/* execs or spawns run untraced (a child is not part of this trace).                                  */
static void scrub_environment(void)
{
    extern char **environ;
    char **w = environ;
    for (char **r = environ; *r; r++) {
        if (mt_strncmp(*r, "MEMTRACE_", 9) == 0) continue;
        if (mt_strncmp(*r, "LD_PRELOAD=", 11) == 0) {
            /* drop our entry, keep the rest of the list in place */
            static const char agent_name[] = "libmemtrace-agent.so";
            const size_t an = sizeof agent_name - 1;
            char *v = *r + 11, *out = v;
            char *p = v;
            while (*p) {
                char *start = p;
                while (*p && *p != ':' && *p != ' ') p++;
                size_t len = (size_t)(p - start);
                int ours = len >= an && mt_strncmp(p - an, agent_name, an) == 0;
                if (!ours && len) {
                    if (out != v) *out++ = ':';
                    for (char *q = start; q < p; q++) *out++ = *q;
                }
                if (*p) p++;
            }
            *out = 0;
            if (!*v) continue;
        }
        *w++ = *r;
    }
    *w = NULL;
}

static long parse_long(const char *s, long dflt)
{
    if (!s || !*s) return dflt;
    long v = 0;
    while (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
    return v;
}

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    uintptr_t me = (uintptr_t)arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
        if (me >= s && me < e) {
            g.text_start = s;
            g.text_end = e;
            size_t n = mt_strlen(info->dlpi_name);
            if (n >= sizeof g.self_path) n = sizeof g.self_path - 1;
            mt_memcpy(g.self_path, info->dlpi_name, n);
            g.self_path[n] = 0;
            return 1;
        }
    }
    return 0;
}

#define RESOLVE(name) real.name = (typeof(real.name))dlsym(RTLD_NEXT, #name)

__attribute__((constructor(101))) static void agent_init(void)
{
    g.page = sysconf(_SC_PAGESIZE);
    RESOLVE(malloc); RESOLVE(calloc); RESOLVE(realloc); RESOLVE(free); RESOLVE(posix_memalign);
    RESOLVE(aligned_alloc); RESOLVE(memalign); RESOLVE(valloc); RESOLVE(pvalloc); RESOLVE(reallocarray);
    RESOLVE(mmap); RESOLVE(mremap); RESOLVE(munmap); RESOLVE(memcpy); RESOLVE(memmove); RESOLVE(memset);
    RESOLVE(dlopen);
    real.cxa_finalize = (typeof(real.cxa_finalize))dlsym(RTLD_NEXT, "__cxa_finalize");
    real.libc_start_main = (typeof(real.libc_start_main))dlsym(RTLD_NEXT, "__libc_start_main");
    hooks_ready = 1;

    const char *ring_path = getenv("MEMTRACE_RING");
    if (!ring_path) return; /* loaded outside a memtrace session: stay out of the way */
    const char *step = getenv("MEMTRACE_STEP");
    int out_of_line = !step || mt_strncmp(step, "trap", 5) != 0;
    g.regions = (int)parse_long(getenv("MEMTRACE_REGIONS"), MT_REGION_DATA | MT_REGION_HEAP | MT_REGION_ANON | MT_REGION_FILE);
    g.autostart = (int)parse_long(getenv("MEMTRACE_AUTOSTART"), 1);
    int fd = (int)mt_sys3(SYS_open, ring_path, O_RDWR | O_CLOEXEC, 0);
    scrub_environment();
    if (fd < 0) return;
    struct mt_ring_header hdr;
    if (mt_sys3(SYS_read, fd, &hdr, sizeof hdr) != sizeof hdr || hdr.magic != MT_MAGIC || hdr.version != MT_VERSION) {
        mt_sys1(SYS_close, fd);
        return;
    }
    size_t total = hdr.header_size + hdr.capacity;
    long m = mt_sys6(SYS_mmap, 0, (long)total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    mt_sys1(SYS_close, fd);
    if (m < 0 && m > -4096) return;
    g.ring = (struct mt_ring_header *)m;
    g.ring_data = (unsigned char *)m + hdr.header_size;
    g.ring_mask = hdr.capacity - 1;
    g.pid = (int)mt_sys0(SYS_getpid);
    g.ppid = (int)mt_sys0(SYS_getppid);
    /* memtrace killed outright (SIGKILL) must not leave the program running on its own. The setting  */
    /* survives the exec that made this process the program; the check closes the race with a parent  */
    /* that died before it was made.                                                                  */
    mt_sys2(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL);
    if (mt_sys0(SYS_getppid) != g.ppid) mt_sys2(SYS_kill, g.pid, SIGKILL);
    g.threads = 1;
    dl_iterate_phdr(find_self, (void *)(uintptr_t)agent_init);
    ldso_base = (uintptr_t)getauxval(AT_BASE);
    if (out_of_line) ool_init();
    g.active = 1;
    g.ring->agent_pid = (uint64_t)g.pid;

    REC(MT_HELLO, struct mt_hello, h);
    h.pid = (uint64_t)g.pid;
    h.page_size = (uint64_t)g.page;
    h.agent_text_start = g.text_start;
    h.agent_text_end = g.text_end;
    h.regions = (uint64_t)g.regions;
    emit(&h);
    emit_thread(1, 0);
    scan_new_modules(1);

    uint64_t all_but_ours = ~OUR_SIGNALS;
    if (give_alt_stack()) mt_sys2(SYS_sigaltstack, &ts.alt, 0);
    set_kernel_action(SIGSEGV, (void *)on_segv, SA_SIGINFO | SA_NODEFER | SA_ONSTACK, all_but_ours);
    set_kernel_action(SIGTRAP, (void *)on_trap, SA_SIGINFO | SA_NODEFER | SA_ONSTACK, all_but_ours);
    /* Not on the alternate stack: a handler running there could not change it (program_sigaltstack). */
    set_kernel_action(SIGSYS, (void *)on_sys, SA_SIGINFO | SA_NODEFER, all_but_ours);
    adopt_existing_handlers();
    enable_dispatch();
}
