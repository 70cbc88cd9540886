/*
 * memtrace agent, system calls. Linux syscall user dispatch sends every system call made outside the agent's
 * own code to the SIGSYS handler, which opens the pages its user buffers lie in, makes the call from inside
 * the agent (exempt from dispatch), records the kernel's reads and writes of the I/O family as MT_BLOCK
 * records (flag MT_BLK_SYSCALL, `what` the call's number), and protects again. Without this, a write() of a
 * heap buffer fails with EFAULT. What each call reads and writes is described in ONE table (syscall_table). A
 * call with more buffers than the agent can open one by one, and a call the table does not know that passes a
 * pointer into traced memory, runs with all traced memory open: slower, never different from an untraced run
 * (syscall_table.c). A plain buffer in moved memory (traced.c) is not opened at all: the kernel gets its
 * alias address instead; so are the buffers of an iovec array (readv, writev, preadv*, pwritev*,
 * process_vm_*), of a msghdr (sendmsg, recvmsg) and of an mmsghdr array (sendmmsg, recvmmsg): the kernel gets
 * a copy of the array, or of the msghdrs, naming the alias addresses, and what the call writes into them
 * (recvmsg's lengths and flags, each message's msg_len) is given back (syscall_vectors.c). This file handles
 * the call: the calls that end, fork or replace the process, the opening and closing around the call, and the
 * call itself; the memory map's changes go to syscall_map.c. The files' shared declarations are in syscall.h.
 *
 * Calls the agent must see through: clone with CLONE_VM runs natively (the handler lets that one call through
 * and regains control with the trap flag, in the parent and in the new thread, which then turns dispatch on
 * for itself); fork runs from inside the handler, the child makes private copies of moved memory (the parent
 * waits for them) and runs untraced; exit, exec and a fatal signal the program sends itself write the end of
 * the process to the stream first; sigaction, sigprocmask and sigaltstack are emulated (syscall_signals.c) so
 * that the agent's three signals stay its own, every handler returns through the agent's restorer, and the
 * program's alternate stack is kept.
 *
 * How its output reads: the program sees each call's result as untraced; the trace gets the block records of
 * syscall_table.c, and MT_FORK, thread and exit records for the calls that make or end a process.
 *
 * What it gets wrong: a fatal signal sent by another process leaves no `fatal` record; a system call made by
 * code the table does not know, with a pointer into traced memory, opens everything (other threads' accesses
 * during it are not seen); a vector buffer in traced memory that is not moved (a file mapping), or one split
 * into more than IOV_MAX pieces (more than MMSG_IOVS over all of an mmsghdr array's messages), is opened; the
 * remote side of process_vm_* on this process itself is reached through the alias but not recorded as block
 * events, nor are the lengths and flags the kernel writes into a msghdr or an mmsghdr's msg_len (only the
 * data the calls move is); the block records say what the kernel may have touched, up to the call's result,
 * not byte by byte. A private futex waited on through an alias address is keyed by that address: every futex
 * call of the program is rewritten the same way, but the kernel's own wake-ups (robust mutexes of a dying
 * thread, clear_child_tid) at a program address in moved memory would miss it. A clone3 or a clone on a new
 * stack without CLONE_VM leaves its child sharing moved memory with the parent.
 */
#include "syscall.h"
#include <linux/futex.h>
#include <sys/resource.h>
#include <sys/wait.h>

/* fork, and clone of a process (no CLONE_VM) on the caller's stack: made from inside the handler, the child */
/* given private copies of moved memory before it runs on, untraced. The child's result, or the parent's.   */
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
            mt_unmap_pages((void *)copied, (size_t)g.page);
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
    if (copied) mt_unmap_pages((void *)copied, (size_t)g.page);
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

/* The calls that end, fork or replace the process, or that must run natively: handled whole here (1),  */
/* with their result in the context; 0 for every other call, which runs below (a kill of itself too, once */
/* its end is noted).                                                                                    */
static int process_call(long nr, long *a, ucontext_t *uc, uintptr_t ip)
{
    greg_t *gr = uc->uc_mcontext.gregs;
    long ret;
    switch (nr) {
    case SYS_rt_sigreturn: /* a handler installed before we could fix its restorer */
        ts.selector = SUD_ALLOW;
        gr[REG_RIP] -= 2;
        return 1;
    case SYS_clone:
        if (a[0] & CLONE_VM) { run_natively(uc, (a[0] & CLONE_VFORK) != 0, !(a[0] & CLONE_VFORK)); return 1; }
        if (a[1]) { run_natively(uc, 1, 0); return 1; } /* a process on its own stack: rare, run natively */
        gr[REG_RAX] = do_fork_like(nr, a, uc);
        return 1;
    case SYS_clone3: {
        uint64_t flags = 0;
        copy_in(&flags, (uintptr_t)a[0], 8);
        run_natively(uc, (flags & CLONE_VM) == 0 || (flags & CLONE_VFORK) != 0,
                     (flags & CLONE_VM) && !(flags & CLONE_VFORK));
        return 1;
    }
    case SYS_vfork:
        run_natively(uc, 1, 0);
        return 1;
    case SYS_fork:
        gr[REG_RAX] = do_fork_like(nr, a, uc);
        return 1;
    case SYS_exit_group:
        emit_stats_and_exit(MT_EXIT_NORMAL, (uint64_t)a[0], ip, 0, NULL);
        mt_sys1(SYS_exit_group, a[0]);
        return 1;
    case SYS_exit:
        emit_thread(0, (uint64_t)a[0]);
        __atomic_sub_fetch(&g.threads, 1, __ATOMIC_RELAXED);
        mt_sys1(SYS_exit, a[0]);
        return 1;
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
        return 1;
    }
    case SYS_kill: case SYS_tkill: case SYS_tgkill:
        note_fatal_self_signal(nr, a, uc);
        return 0; /* and the call runs below */
    }
    return 0;
}

/* Opens every traced page the call may read or write for the time of the call (sp), or gives the kernel */
/* the alias addresses (k: the arguments as the kernel gets them; rd: the copies they point to). Whether  */
/* the program is recording.                                                                             */
static int open_for_call(long nr, const long *a, long *k, struct spans *sp, struct redirected *rd)
{
    spin_lock(&g.lock);
    int recording = g.recording;
    spin_unlock(&g.lock);
    if (recording) {
        describe_syscall(nr, a, sp, k, rd);
        spin_lock(&g.lock);
        int opened = 0;
        while (!sp->all && opened < sp->n && open_locked(sp->s[opened], sp->e[opened])) opened++;
        if (!sp->all && opened < sp->n) sp->all = 1; /* no memory for the table of openings */
        if (sp->all) {
            for (int i = 0; i < opened; i++) close_locked(sp->s[i], sp->e[i]);
            sp->n = 0;
            open_all_locked();
        }
        spin_unlock(&g.lock);
    }
    return recording;
}

/* The call itself, with the arguments the kernel gets; the signal calls are the program's, emulated. */
static long call_for_program(long nr, long *a, const long *k, ucontext_t *uc)
{
    long ret;
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
    return ret;
}

/* Closes what open_for_call opened. */
static void close_after_call(const struct spans *sp)
{
    if (sp->n || sp->all) {
        spin_lock(&g.lock);
        for (int i = 0; i < sp->n; i++) close_locked(sp->s[i], sp->e[i]);
        if (sp->all) close_all_locked();
        spin_unlock(&g.lock);
    }
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
    count(&g.syscalls);

    if (refused_clone(nr, a) || refused_io_uring(nr)) { /* limits.c: said in one line */
        gr[REG_RAX] = -ENOSYS;
        return;
    }
    if (process_call(nr, a, uc, ip)) return;

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
    int recording = open_for_call(nr, a, k, &sp, &rd);

    struct rlimit as_kernel;
    int as_widened = as_limit_before(nr, a, k, &as_kernel);
    uintptr_t brk_before = nr == SYS_brk ? (uintptr_t)mt_sys1(SYS_brk, 0) : 0;
    if (nr == SYS_mremap) {
        /* a memfd cannot follow the mapping's growth: it moves as private memory, and is moved again */
        spin_lock(&g.lock);
        alias_make_private_locked(page_down((uintptr_t)a[0]), page_up((uintptr_t)a[0] + (uintptr_t)a[1]));
        spin_unlock(&g.lock);
    }
    long ret = call_for_program(nr, a, k, uc);

    as_limit_after(nr, a, k, ret, as_widened);
    if (rd.mh_at && nr == SYS_recvmsg && ret >= 0) msghdr_give_back(&rd.mh, rd.mh_at + (uintptr_t)rd.mh_delta);
    if (rd.mm && ret > 0) mmsg_give_back(&rd, nr, ret);
    redirected_release(&rd);
    if (recording && ret >= 0 && !ts.untraced) /* inside a wrapper the kernel works for the allocator */
        record_syscall(nr, a, ip, ret);

    follow_memory_map(nr, a, ret, brk_before);
    close_after_call(&sp);
    if (chk.on && !ts.untraced) check_syscall_out(nr, a, ret, uc); /* read(2) past a buffer: check_run.c */
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
