/*
 * mt_debug.c (shared by the agent and the runtime): what an MT_DEBUG build does when an invariant a
 * header promises does not hold (MT_ASSERT, mt_common.h), and the switch a test uses to break one on
 * purpose. `make CFLAGS="-O1 -g -DMT_DEBUG"` builds both libraries with the assertions (the product's
 * build has none: MT_ASSERT is empty there, and memtrace_debug_break is not exported).
 *
 * How its output reads: one line on standard error, "memtrace: invariant broken at traced.c:123: the
 * traced set is sorted and disjoint (set[i-1].end <= set[i].start)", then the process dies of SIGABRT
 * with the default action (status 134), wherever it was, signal handlers included.
 *
 * What it gets wrong: the line goes to descriptor 2, whatever the program made of it. A break asked for
 * is taken by the first check that looks for it, in whichever thread.
 */
#include <signal.h>

#include "mt_common.h"

void mt_invariant_broken(const char *file, int line, const char *what, const char *cond)
{
    char msg[1024];
    size_t at = 0;
    const char *base = file;
    for (const char *p = file; *p; p++) if (*p == '/') base = p + 1;
    char digits[12];
    int n = 0;
    unsigned v = (unsigned)line;
    do { digits[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    const char *parts[] = {"memtrace: invariant broken at ", base, ":", NULL, ": ", what, " (", cond, ")\n"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (!parts[i]) { while (n && at < sizeof msg) msg[at++] = digits[--n]; continue; }
        for (const char *p = parts[i]; *p && at < sizeof msg; p++) msg[at++] = *p;
    }
    mt_sys3(SYS_write, 2, msg, at);
    /* the default action, unblocked: the program's handler (or the agent's forwarding) must not catch it */
    struct { void *handler; unsigned long flags; void *restorer; uint64_t mask; } dfl = {SIG_DFL, 0, 0, 0};
    mt_sys4(SYS_rt_sigaction, SIGABRT, &dfl, NULL, 8);
    uint64_t abrt = 1ULL << (SIGABRT - 1);
    mt_sys4(SYS_rt_sigprocmask, SIG_UNBLOCK, &abrt, NULL, 8);
    mt_sys3(SYS_tgkill, mt_sys0(SYS_getpid), mt_sys0(SYS_gettid), SIGABRT);
    for (;;) mt_sys1(SYS_exit_group, 134);
}

static const char *requested;   /* what memtrace_debug_break asked to break, until taken */

void mt_debug_request_break(const char *what) { __atomic_store_n(&requested, what, __ATOMIC_RELEASE); }

int mt_debug_take_break(const char *what)
{
    const char *r = __atomic_load_n(&requested, __ATOMIC_ACQUIRE);
    if (!r) return 0;
    size_t n = mt_strlen(what);
    if (mt_strncmp(r, what, n + 1) != 0) return 0;
    return __atomic_compare_exchange_n(&requested, &r, NULL, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}
