/*
 * mt_debug.c (shared by the agent and the runtime): what an MT_DEBUG build does when an invariant a
 * header promises does not hold (MT_ASSERT, mt_common.h). `make CFLAGS="-O1 -g -DMT_DEBUG"` builds both libraries with the assertions (the product's
 * build has none: MT_ASSERT is empty there, and memtrace_debug_break is not exported).
 *
 * How its output reads: one line on standard error, "memtrace: invariant broken at traced.c:123: the
 * traced set is sorted and disjoint, in pages (i == 0 || last <= w[0])", then the process dies of SIGABRT
 * with the default action (status 134), wherever it was, signal handlers included.
 *
 * Each library exports memtrace_debug_break(what) in its MT_DEBUG build only (traced.c: "ranges";
 * runtime/rt_debug.c: "buffer"), which breaks one invariant on purpose so that a test
 * (launch.DebugBuildTest) sees the next check made in the normal course fire.
 *
 * What it gets wrong: the line goes to descriptor 2, whatever the program made of it; a program that
 * closed it or pointed it elsewhere does not show it.
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
