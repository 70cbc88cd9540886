/* Rewrite sweep (bench/rewrite-sweep.sh): a SIGSEGV handler that prints the stack of a fault with
 * backtrace() (a crash reporter), then exits with status 3. Rewritten, the fault is in trampoline text,
 * which has no unwind information, so the walk stops there (docs/rewriting.md, "Signals, unwinding,
 * exceptions"): a known difference from native. */
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int *volatile p;
static void handler(int sig, siginfo_t *si, void *ucv) {
    void *f[32];
    int n = backtrace(f, 32);
    char **names = backtrace_symbols(f, n);
    for (int i = 0; i < n; i++) {
        char *s = strchr(names[i], '(');
        char *e = s ? strchr(s, '+') : NULL;
        if (s && e && e > s + 1) printf("%.*s\n", (int)(e - s - 1), s + 1);
    }
    fflush(stdout);
    _exit(3);
}
__attribute__((noinline)) int crash_here(int x) { return *p + x; }
__attribute__((noinline)) int caller(int x) { return crash_here(x) * 2; }
int main(int argc, char **argv) {
    struct sigaction sa = {0};
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    return caller(argc);
}
