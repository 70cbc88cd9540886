/*
 * memtrace agent, the program's signal calls, emulated from the SIGSYS handler (syscall.c): sigaction,
 * sigprocmask and sigaltstack, so that the agent's three signals (SIGSEGV, SIGTRAP, SIGSYS) stay its own,
 * every handler of the program returns through the agent's restorer, and the program's alternate stack is
 * kept; and the end of the process written to the stream before a fatal signal the program sends itself.
 *
 * How its output reads: the program reads back the actions, mask and alternate stack it set, as untraced;
 * a fatal signal sent to itself leaves an exit record (MT_EXIT_SIGNAL) before the kernel ends the process.
 *
 * What it gets wrong: a fatal signal sent by another process leaves no `fatal` record; a sigaction with a
 * size other than 8 goes to the kernel as it is.
 */
#include "syscall.h"

/* The program's sigaction. Its actions live in g.app_action and are what it reads back; the kernel   */
/* holds ours: the program's handlers are reached through on_program_signal (fault.c), and the agent's  */
/* three signals stay with the agent, their program handlers called by forward().                       */
void handle_sigaction(long *a, long *ret)
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
long program_sigprocmask(const long *a, ucontext_t *uc)
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
long program_sigaltstack(const long *a, ucontext_t *uc)
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
void note_fatal_self_signal(long nr, const long *a, ucontext_t *uc)
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
