/*
 * rw_adv_signals.c: a SIGSEGV handler that leaves by siglongjmp, for memtrace run --mode rewrite
 * (RewriteAdversarialTest). 100 rounds load from a PROT_NONE page at 0x2a0000000000 in main (a rewritten load), 10 rounds
 * memcpy from it (the fault in libc's rewritten memcpy); the handler (SA_NODEFER) counts each fault in
 * hits[depth] and, at every odd count of the outer level, faults itself on the page's second line, so the
 * nested handler is the one that siglongjmps out of both. Each fault's si_addr is checked. Prints
 * "hits H0 H1 wrong W".
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static sigjmp_buf back;
static volatile int depth;
long hits[2];
long wrong;
char *guard;
static volatile long sink;
static char copy[64];
static void *(*volatile copier)(void *, const void *, size_t) = memcpy;

static void segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    int d = depth;
    hits[d] = hits[d] + 1;
    char *a = si->si_addr;
    if (a < guard + 64 * d || a >= guard + 64 * (d + 1)) wrong = wrong + 1;
    if (d == 0 && (hits[0] & 1)) {
        depth = 1;
        sink = *(volatile long *)(guard + 64); /* faults: the handler again, nested */
    }
    depth = 0;
    siglongjmp(back, 1);
}

int main(void)
{
    guard = mmap((void *)0x2a0000000000, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (guard == MAP_FAILED) return 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &sa, 0);
    for (int r = 0; r < 100; r++)
        if (sigsetjmp(back, 1) == 0) sink = *(volatile long *)guard;
    for (int r = 0; r < 10; r++)
        if (sigsetjmp(back, 1) == 0) copier(copy, guard, sizeof copy);
    sigset_t now;
    sigprocmask(SIG_BLOCK, 0, &now);
    printf("hits %ld %ld wrong %ld%s\n", hits[0], hits[1], wrong, sigismember(&now, SIGSEGV) ? " blocked" : "");
    return 0;
}
