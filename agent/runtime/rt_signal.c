/*
 * rt_signal.c: signals in a program linked with libmemtrace-rt.so.
 *
 * The runtime lives on SIGSEGV (full buffers and first use, rt_buffer.c), so its handler stays installed
 * whatever the program does: sigaction/signal on SIGSEGV only record the program's action, which the
 * runtime's handler calls for every fault that is not a probe's (signal under all of glibc's names:
 * bsd_signal, ssignal, and the one-shot __sysv_signal/sysv_signal that <signal.h> binds signal() to
 * under _POSIX_C_SOURCE without _DEFAULT_SOURCE; System V's sigset, sigignore, sighold and sigrelse too, whose
 * glibc bodies call its internal sigaction and sigprocmask). sigprocmask/pthread_sigmask never block
 * SIGSEGV, and every handler the program installs runs with SIGSEGV unblocked (its probes may fault).
 *
 * Every other signal whose default action kills the process gets the runtime's handler while the program
 * leaves it at SIG_DFL: it writes every thread's buffer, records MT_EXIT (signal, pc, fault address or all
 * ones when sent by kill) and the end record, then dies of the same signal by its default action. SIG_IGN
 * goes straight to the kernel. A handler the program sets, for any signal, and one already set when the
 * runtime starts (a preinit_array, a system call of another library), is entered through program_handler
 * with the program's flags and mask (and reported back as the program set it): a loop that keeps its
 * probes' cursor in a register (docs/compiled-in.md, "A loop's cursor") may be running, so the handler's
 * probes start where the loop's records end, and the loop goes on after the handler's; a probe stopped
 * after its first store is rewound to it (rt_probe.c), so its slots follow the handler's; no other
 * register is taken for the cursor, whatever it points to; a signal that comes while the runtime writes an
 * event past the cursor waits until the event is claimed (defer), and a synchronous fault there, which
 * cannot be the program's, is the runtime's own: reported on one line, the process dies of it
 * (in_emit_window).
 *
 * In rewrite mode (rw_planned at start) SIGTRAP is kept the same way: the int3 fallback (rw_trap.c) lives
 * on it; so it is when `memtrace cc` probes are armed for access stacks (rt.ccarm, rt_ccarm.c). Its handler stays the runtime's (SA_NODEFER, SIGTRAP never in its mask), the program's action is
 * only recorded and called for every SIGTRAP that is not the fallback's (raise, kill, the program's own
 * int3), SIG_IGN ignores a sent one and a trap dies as the kernel would kill, and sigprocmask,
 * pthread_sigmask and the masks of the program's handlers never block it: a blocked trap kills.
 *
 * What it gets wrong: real-time signals and signals ignored by default are not watched; a program that
 * dies of a signal it had a handler for (its handler re-raises after resetting to SIG_DFL) is caught only
 * when it resets through sigaction/signal. The masks the program's sigsuspend, ppoll, pselect, epoll_pwait
 * and epoll_pwait2 install while they wait are filtered like sigprocmask's (a handler runs with them); the
 * same calls made inside libc (sigpause's sigsuspend) and raw system calls are not. The program's SIGSEGV handler runs with the mask the kernel would have
 * set, except that SIGSEGV itself stays open. A handler set by a raw system call after the runtime
 * started is entered directly: its records may overwrite a loop's or land inside a probe's slots.
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>

#include "rt.h"

/* The sigset operations on the bits themselves, not libc's: in rewrite mode libc's are rewritten code and */
/* the runtime's calls (its handler's mask, the wrappers' copies) were recorded as the program's accesses  */
/* (found comparing sqlite3 with Lackey). As glibc's: sigfillset leaves out its internal signals 32, 33.   */
#define RT_SIGWORD(sig) (((unsigned long *)set)[((unsigned)(sig) - 1) / (8 * sizeof(unsigned long))])
#define RT_SIGBIT(sig) (1UL << (((unsigned)(sig) - 1) % (8 * sizeof(unsigned long))))
static int rt_sigemptyset(sigset_t *set)
{
    for (unsigned i = 0; i < sizeof *set / sizeof(unsigned long); i++) ((unsigned long *)set)[i] = 0;
    return 0;
}
static int rt_sigfillset(sigset_t *set)
{
    for (unsigned i = 0; i < sizeof *set / sizeof(unsigned long); i++) ((unsigned long *)set)[i] = ~0UL;
    RT_SIGWORD(32) &= ~(RT_SIGBIT(32) | RT_SIGBIT(33));
    return 0;
}
static int rt_sigaddset(sigset_t *set, int sig) { RT_SIGWORD(sig) |= RT_SIGBIT(sig); return 0; }
static int rt_sigdelset(sigset_t *set, int sig) { RT_SIGWORD(sig) &= ~RT_SIGBIT(sig); return 0; }
static int rt_sigismember(const sigset_t *set, int sig) { return (RT_SIGWORD(sig) & RT_SIGBIT(sig)) != 0; }
#define sigemptyset rt_sigemptyset
#define sigfillset rt_sigfillset
#define sigaddset rt_sigaddset
#define sigdelset rt_sigdelset
#define sigismember rt_sigismember

#define SIGBIT(s) (1ULL << ((s) - 1))

static const int fatal_signals[] = {SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE,
                                    SIGUSR1, SIGSEGV, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM, SIGSTKFLT,
                                    SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSYS};

static struct {
    int (*sigaction)(int, const struct sigaction *, struct sigaction *);
    int (*sigprocmask)(int, const sigset_t *, sigset_t *);
    int (*pthread_sigmask)(int, const sigset_t *, sigset_t *);
    unsigned char owned[65];            /* signals the runtime watches */
    int trap;                           /* SIGTRAP kept like SIGSEGV: rewrite mode's int3 fallback */
    unsigned char known[65];            /* app[sig] holds the program's view */
    struct sigaction app[65];           /* the program's view of their actions */
} s;

static void on_signal(int sig, siginfo_t *si, void *ucv);
static void program_handler(int sig, siginfo_t *si, void *ucv);
static void call_program(void *h, int flags, int sig, siginfo_t *si, ucontext_t *uc);
static void defer(int sig, siginfo_t *si, ucontext_t *uc);
static int install_program(int sig, const struct sigaction *act);

/* The signals the runtime lives on: never blocked for the program, always the runtime's handler. */
static int kept(int sig) { return sig == SIGSEGV || (sig == SIGTRAP && s.trap); }

static void install_ours(int sig)
{
    struct sigaction a;
    rt_memzero(&a, sizeof a);
    a.sa_sigaction = on_signal;
    a.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART | (kept(sig) ? SA_NODEFER : 0);
    /* Nothing asynchronous interrupts the handler (it may be mid-way through a buffer swap). */
    sigfillset(&a.sa_mask);
    sigdelset(&a.sa_mask, SIGSEGV);
    sigdelset(&a.sa_mask, SIGBUS);
    sigdelset(&a.sa_mask, SIGFPE);
    sigdelset(&a.sa_mask, SIGILL);
    if (s.trap) sigdelset(&a.sa_mask, SIGTRAP); /* libc the handler runs (zstd's memcpy) may trap */
    s.sigaction(sig, &a, NULL);
}

static void set_default(int sig)
{
    struct sigaction a;
    rt_memzero(&a, sizeof a);
    a.sa_handler = SIG_DFL;
    s.sigaction(sig, &a, NULL);
}

static void die(int sig, siginfo_t *si, ucontext_t *uc)
{
    uint64_t addr = si->si_code > 0 ? (uint64_t)(uintptr_t)si->si_addr : ~0ULL;
    rt_adopt_loop_cursor(uc); /* the records a loop keeps only in a register go out too */
    rt_finish(MT_EXIT_SIGNAL, (uint64_t)sig, (uint64_t)uc->uc_mcontext.gregs[REG_RIP], addr, NULL);
    set_default(sig);
    /* On return the signal, unblocked, is delivered again and kills by its default action (a fault     */
    /* that would re-execute dies of the pending signal first).                                         */
    sigdelset(&uc->uc_sigmask, sig);
    mt_sys3(SYS_tgkill, rt.pid, rt_tid(), sig);
}

/* A synchronous signal raised inside rt_emit_seq's window (from its read of the cursor to its claim) is not  */
/* the program's: the window reads only the record the runtime built on its own stack and the thread's      */
/* runtime variables, writes only the thread's buffer below its end (checked before) and calls nothing, so  */
/* nothing there touches the program's memory or needs a page the program maps or protects, and the frame   */
/* is in place before it opens (docs/compiled-in.md, "Signal handlers"). Deferring is impossible (the       */
/* instruction faults again) and the program's handler must not run there (its records would be overwritten */
/* by the event's remaining writes, the event then written twice), nor would it see such a fault natively.  */
/* So a fault there is the runtime's own: one line on stderr and the process dies of it, its trace written  */
/* up to the cursor (the unclaimed event left out). A single step (the trap flag's SIGTRAP) goes on unseen: */
/* the runtime's instructions are none of the program's, and the step after the window is delivered.       */
static int in_emit_window(int sig, siginfo_t *si, ucontext_t *uc)
{
    if (!rt_self.emitting || si->si_code <= 0) return 0;
    if (sig == SIGTRAP) return si->si_code == TRAP_TRACE;
    if (sig != SIGSEGV && sig != SIGBUS && sig != SIGFPE && sig != SIGILL) return 0;
    char msg[160];
    size_t at = 0;
    const char *head = "memtrace: the runtime faulted writing an event (signal ";
    for (const char *c = head; *c; c++) msg[at++] = *c;
    uint64_t v[3] = {(uint64_t)sig, (uint64_t)uc->uc_mcontext.gregs[REG_RIP], (uint64_t)(uintptr_t)si->si_addr};
    const char *between[3] = {" at 0x", ", address 0x", "); the program's handler is not called\n"};
    for (int k = 0; k < 3; k++) {
        int shift = 60;
        if (k == 0) {
            for (uint64_t d = v[0] >= 10 ? 10 : 1; d; d /= 10) msg[at++] = (char)('0' + v[0] / d % 10);
        } else {
            while (shift > 0 && !(v[k] >> shift)) shift -= 4;
            for (; shift >= 0; shift -= 4) msg[at++] = "0123456789abcdef"[(v[k] >> shift) & 15];
        }
        for (const char *c = between[k]; *c; c++) msg[at++] = *c;
    }
    mt_sys3(SYS_write, 2, msg, at);
    rt_self.emitting = 0;
    rt_self.deferred = 0; /* signals it deferred stay pending, blocked until the handler returns: then it dies */
    die(sig, si, uc);
    return 1;
}

static void on_signal(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    if (sig == SIGSEGV && rt_probe_fault(si, uc)) return;
    if (sig == SIGTRAP && s.trap && rw_trap(si, uc)) return;
    if (in_emit_window(sig, si, uc)) return;
    struct sigaction *a = &s.app[sig];
    int sync = si->si_code > 0 && (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGTRAP);
    if (a->sa_handler == SIG_IGN && !sync) return;
    if (a->sa_handler == SIG_DFL || a->sa_handler == SIG_IGN) {
        die(sig, si, uc);
        return;
    }
    /* The program's handler (only SIGSEGV's and a kept SIGTRAP's come here while the program has one). One */
    /* sent (kill, sigqueue) while the runtime writes an event waits for its claim, as program_handler's do. */
    if (rt_self.emitting) {
        defer(sig, si, uc);
        return;
    }
    void *h = (void *)a->sa_sigaction;
    int flags = a->sa_flags;
    sigset_t mask = uc->uc_sigmask, old;
    for (int i = 1; i < 65; i++)
        if (sigismember(&a->sa_mask, i) == 1) sigaddset(&mask, i);
    if (!(flags & SA_NODEFER)) sigaddset(&mask, sig);
    sigdelset(&mask, SIGSEGV);
    if (s.trap) sigdelset(&mask, SIGTRAP);
    if (flags & SA_RESETHAND) a->sa_handler = SIG_DFL;
    mt_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &mask, &old, 8);
    call_program(h, flags, sig, si, uc);
    mt_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &old, 0, 8);
}

/* Calls the program's handler h. Its probes record at the cursor, which the interrupted code may not  */
/* have left where its records end: a loop that keeps the cursor in a register C has the cursor in     */
/* memory where the loop began, and a probe stopped after its first store has not moved it yet. So C   */
/* becomes the cursor for the handler (rt_signal_cursor; a probe in mid-store is first rewound to its   */
/* first store, which it then runs again), and the cursor the handler leaves becomes C again, in a new  */
/* buffer if the handler's records filled the old one (unless the handler changed C in the context).    */
/* A handler that leaves by siglongjmp keeps the loop's records, and a rewound probe's instruction      */
/* never runs, so its records are rightly not there.                                                    */
static void call_program(void *h, int flags, int sig, siginfo_t *si, ucontext_t *uc)
{
    int c = rt_signal_cursor(uc);
    greg_t adopted = c >= 0 ? uc->uc_mcontext.gregs[c] : 0;
    if (flags & SA_SIGINFO) ((void (*)(int, siginfo_t *, void *))h)(sig, si, uc);
    else ((void (*)(int))h)(sig);
    if (c >= 0 && uc->uc_mcontext.gregs[c] == adopted) uc->uc_mcontext.gregs[c] = (greg_t)__memtrace_cursor;
}

/* A signal that came while rt_emit_seq wrote an event past the cursor and had not claimed it: the   */
/* program's handler would record over those slots, and the emitter's remaining writes then over the  */
/* handler's records (CcSignalStressTest: the trace broke at "a tag's record ends inside a slot").    */
/* The signal is sent again with its siginfo and stays blocked on return (the interrupted mask kept   */
/* aside); the emitter unblocks it once its event is claimed, and it is delivered there. A one-shot   */
/* handler the kernel has reset already (SA_RESETHAND) is installed again for that delivery.           */
static void defer(int sig, siginfo_t *si, ucontext_t *uc)
{
    if (!rt_self.deferred) {
        rt_memcpy(&rt_self.deferred_mask, &uc->uc_sigmask, sizeof rt_self.deferred_mask);
        rt_self.deferred = 1;
    }
    sigaddset(&uc->uc_sigmask, sig);
    if ((s.app[sig].sa_flags & SA_RESETHAND) && !kept(sig)) install_program(sig, &s.app[sig]);
    mt_sys4(SYS_rt_tgsigqueueinfo, rt.pid, rt_tid(), sig, si);
}

/* The program's handler for sig, entered with the mask and flags the program asked for. */
static void program_handler(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    if (in_emit_window(sig, si, uc)) return;
    if (rt_self.emitting) {
        defer(sig, si, uc);
        return;
    }
    struct sigaction *a = &s.app[sig];
    void *h = (void *)a->sa_sigaction;
    int flags = a->sa_flags;
    if (a->sa_handler == SIG_IGN) return;   /* changed while this signal was on its way */
    if (a->sa_handler == SIG_DFL) {
        if (s.owned[sig]) die(sig, si, uc);
        return;
    }
    if (flags & SA_RESETHAND) { /* the kernel has reset the action already */
        a->sa_handler = SIG_DFL;
        a->sa_flags = 0;
        if (s.owned[sig]) install_ours(sig);
    }
    call_program(h, flags, sig, si, uc);
}

/* The kernel's action for a handler the program sets: program_handler, with the program's mask and flags. */
static int install_program(int sig, const struct sigaction *act)
{
    struct sigaction a = *act;
    a.sa_sigaction = program_handler;
    a.sa_flags |= SA_SIGINFO;
    return s.sigaction(sig, &a, NULL);
}

void rt_signal_init(void)
{
    s.sigaction = (typeof(s.sigaction))rt_next("sigaction");
    s.sigprocmask = (typeof(s.sigprocmask))rt_next("sigprocmask");
    s.pthread_sigmask = (typeof(s.pthread_sigmask))rt_next("pthread_sigmask");
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++) s.owned[fatal_signals[i]] = 1;
    s.trap = rw_planned() || rt.ccarm;
    rt_loops_init();
    for (int sig = 1; sig < 65; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP) continue;
        /* A sigaction through this library before now (a preinit_array, an earlier constructor) set the */
        /* program's view and installed program_handler; anything else set before us (a raw system call, */
        /* a library bound to libc's sigaction) is the kernel's action, taken as the program's.          */
        if (!s.known[sig]) {
            if (s.sigaction(sig, NULL, &s.app[sig])) continue; /* one of libc's own signals */
            s.known[sig] = 1;
        }
        sighandler_t h = s.app[sig].sa_handler;
        /* An inherited SIG_IGN (nohup) stays; a handler set before us is entered through program_handler. */
        if (kept(sig) || (h == SIG_DFL && s.owned[sig])) install_ours(sig);
        else if (h != SIG_DFL && h != SIG_IGN) install_program(sig, &s.app[sig]);
    }
    sigset_t segv;
    sigemptyset(&segv);
    sigaddset(&segv, SIGSEGV);
    if (s.trap) sigaddset(&segv, SIGTRAP);
    s.sigprocmask(SIG_UNBLOCK, &segv, NULL);
}

/* Before main: a handler set by a raw system call since rt_signal_init (in the executable's preinit_array or */
/* a library's constructor, which run after this library's: it is linked -z initfirst) is the program's too,  */
/* taken over as rt_signal_init takes one set before it. Handlers in this library's text are its own already. */
void rt_signal_adopt_raw(void)
{
    for (int sig = 1; sig < 65; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP) continue;
        struct sigaction now;
        if (s.sigaction(sig, NULL, &now)) continue;
        uintptr_t h = (uintptr_t)now.sa_handler;
        if (now.sa_handler == SIG_DFL || now.sa_handler == SIG_IGN || (h >= rt.text_start && h < rt.text_end)) continue;
        s.app[sig] = now;
        s.known[sig] = 1;
        install_program(sig, &s.app[sig]);
    }
}

RT_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (!s.sigaction) s.sigaction = (typeof(s.sigaction))rt_next("sigaction");
    struct sigaction copy;
    if (act) {
        copy = *act;
        sigdelset(&copy.sa_mask, SIGSEGV);
        if (s.trap) sigdelset(&copy.sa_mask, SIGTRAP);
        act = &copy;
    }
    if (sig <= 0 || sig >= 65 || sig == SIGKILL || sig == SIGSTOP) return s.sigaction(sig, act, old);
    if (!s.known[sig]) { /* the program's view starts as the kernel's */
        int rc = s.sigaction(sig, NULL, &s.app[sig]);
        if (rc) return rc;
        s.known[sig] = 1;
    }
    struct sigaction previous = s.app[sig];
    if (act) {
        /* the program's view first: a signal already on its way to program_handler finds the new action */
        s.app[sig] = *act;
        int rc = 0;
        if (kept(sig))
            ; /* on_signal stays installed and calls the program's handler for faults not the runtime's */
        else if (act->sa_handler == SIG_DFL && s.owned[sig])
            install_ours(sig);
        else if (act->sa_handler == SIG_DFL || act->sa_handler == SIG_IGN)
            rc = s.sigaction(sig, act, NULL);
        else
            rc = install_program(sig, act);
        if (rc) {
            s.app[sig] = previous;
            return rc;
        }
    }
    if (old) *old = previous;
    return 0;
}

static sighandler_t set_handler(int sig, sighandler_t h, int flags)
{
    struct sigaction a, old;
    rt_memzero(&a, sizeof a);
    a.sa_handler = h;
    a.sa_flags = flags;
    if (sigaction(sig, &a, &old) != 0) return SIG_ERR;
    return old.sa_handler;
}

/* Every name glibc exports for signal() goes through sigaction above, or its rt_sigaction reaches the    */
/* kernel directly and replaces the runtime's SIGSEGV handler: the next full buffer then enters the        */
/* program's handler instead, and the thread dies at its guard page. A program compiled with               */
/* _POSIX_C_SOURCE or _XOPEN_SOURCE and no _DEFAULT_SOURCE (zstd's programs/) has its signal() bound to    */
/* __sysv_signal by <signal.h>: one-shot, the signal not blocked in its handler (SA_RESETHAND|SA_NODEFER). */
RT_EXPORT sighandler_t signal(int sig, sighandler_t h) { return set_handler(sig, h, SA_RESTART); }
RT_EXPORT sighandler_t bsd_signal(int sig, sighandler_t h) { return set_handler(sig, h, SA_RESTART); }
RT_EXPORT sighandler_t ssignal(int sig, sighandler_t h) { return set_handler(sig, h, SA_RESTART); }

RT_EXPORT sighandler_t __sysv_signal(int sig, sighandler_t h)
{
    if (h == SIG_ERR || sig < 1 || sig >= 65) { /* glibc's own checks */
        errno = EINVAL;
        return SIG_ERR;
    }
    return set_handler(sig, h, SA_RESETHAND | SA_NODEFER);
}
RT_EXPORT sighandler_t sysv_signal(int sig, sighandler_t h) { return __sysv_signal(sig, h); }

/* System V's sigset() and its kin (<signal.h> with _XOPEN_SOURCE >= 500): glibc's call its internal          */
/* __sigaction and __sigprocmask, past the wrappers here, so sigset(SIGSEGV, h) would replace the runtime's   */
/* handler and sighold(SIGSEGV) block its faults. Here with glibc's semantics (sysdeps/posix/sigset.c):      */
/* sigset(sig, SIG_HOLD) blocks sig and returns its action (SIG_HOLD when it was blocked already); any other  */
/* disposition is installed with no flags and an empty mask, sig unblocked, and the old action returned      */
/* (SIG_HOLD when sig had been blocked). Masks go through sigprocmask below, which never blocks SIGSEGV.     */
RT_EXPORT sighandler_t sigset(int sig, sighandler_t h)
{
    sigset_t one, old;
    if (sig < 1 || sig >= 65) {
        errno = EINVAL;
        return SIG_ERR;
    }
    rt_sigemptyset(&one);
    rt_sigaddset(&one, sig);
    struct sigaction a, prev;
    if (h == SIG_HOLD) {
        if (sigprocmask(SIG_BLOCK, &one, &old) < 0) return SIG_ERR;
        if (rt_sigismember(&old, sig)) return SIG_HOLD;
        if (sigaction(sig, NULL, &prev) < 0) return SIG_ERR;
        return prev.sa_handler;
    }
    rt_memzero(&a, sizeof a);
    a.sa_handler = h;
    if (sigaction(sig, &a, &prev) < 0) return SIG_ERR;
    if (sigprocmask(SIG_UNBLOCK, &one, &old) < 0) return SIG_ERR;
    return rt_sigismember(&old, sig) ? SIG_HOLD : prev.sa_handler;
}
RT_EXPORT int sigignore(int sig) { return set_handler(sig, SIG_IGN, 0) == SIG_ERR ? -1 : 0; }
static int mask_one(int how, int sig)
{
    if (sig < 1 || sig >= 65) {
        errno = EINVAL;
        return -1;
    }
    sigset_t one;
    rt_sigemptyset(&one);
    rt_sigaddset(&one, sig);
    return sigprocmask(how, &one, NULL);
}
RT_EXPORT int sighold(int sig) { return mask_one(SIG_BLOCK, sig); }
RT_EXPORT int sigrelse(int sig) { return mask_one(SIG_UNBLOCK, sig); }

static const sigset_t *without_segv(int how, const sigset_t *set, sigset_t *copy)
{
    if (!set || how == SIG_UNBLOCK) return set;
    *copy = *set;
    sigdelset(copy, SIGSEGV);
    if (s.trap) sigdelset(copy, SIGTRAP);
    return copy;
}

RT_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    if (!s.sigprocmask) s.sigprocmask = (typeof(s.sigprocmask))rt_next("sigprocmask");
    sigset_t copy;
    return s.sigprocmask(how, without_segv(how, set, &copy), old);
}

RT_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    if (!s.pthread_sigmask) s.pthread_sigmask = (typeof(s.pthread_sigmask))rt_next("pthread_sigmask");
    sigset_t copy;
    return s.pthread_sigmask(how, without_segv(how, set, &copy), old);
}

/* The masks a call installs only while it waits (sigsuspend, ppoll, pselect, epoll_pwait, epoll_pwait2):  */
/* a handler that runs meanwhile runs with that mask, so it must leave SIGSEGV (and the int3 fallback's    */
/* SIGTRAP) open as sigprocmask's does, or the handler's first probe fault or trap kills the thread. The   */
/* calls libc makes itself (sigpause's sigsuspend, pselect's ppoll) are not filtered. sigtimedwait,         */
/* sigwaitinfo and signalfd block nothing: they wait for signals the program blocked by sigprocmask.       */
static const sigset_t *open_mask(const sigset_t *set, sigset_t *copy) { return without_segv(SIG_SETMASK, set, copy); }

#define RT_NEXT_OR_ENOSYS(name)                                                        \
    static typeof(name) *next;                                                         \
    if (!next) next = (typeof(name) *)rt_next(#name);                                  \
    if (!next) {                                                                       \
        errno = ENOSYS;                                                                \
        return -1;                                                                     \
    }

RT_EXPORT int sigsuspend(const sigset_t *mask)
{
    RT_NEXT_OR_ENOSYS(sigsuspend)
    sigset_t copy;
    return next(open_mask(mask, &copy));
}

RT_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout, const sigset_t *mask)
{
    RT_NEXT_OR_ENOSYS(ppoll)
    sigset_t copy;
    return next(fds, n, timeout, open_mask(mask, &copy));
}

RT_EXPORT int pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *timeout, const sigset_t *mask)
{
    RT_NEXT_OR_ENOSYS(pselect)
    sigset_t copy;
    return next(n, r, w, e, timeout, open_mask(mask, &copy));
}

RT_EXPORT int epoll_pwait(int fd, struct epoll_event *events, int max, int timeout, const sigset_t *mask)
{
    RT_NEXT_OR_ENOSYS(epoll_pwait)
    sigset_t copy;
    return next(fd, events, max, timeout, open_mask(mask, &copy));
}

RT_EXPORT int epoll_pwait2(int fd, struct epoll_event *events, int max, const struct timespec *timeout, const sigset_t *mask)
{
    RT_NEXT_OR_ENOSYS(epoll_pwait2)
    sigset_t copy;
    return next(fd, events, max, timeout, open_mask(mask, &copy));
}
