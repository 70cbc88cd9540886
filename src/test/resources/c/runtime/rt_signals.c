/*
 * Runtime test: the program's own SIGSEGV handler (with SIGSEGV "blocked" by the program) still catches
 * the program's faults, with probes inside the handler, while small buffers fill over and over.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include "mt_probe.h"

static sigjmp_buf env;
static long scratch[2];

static void handler(int sig, siginfo_t *si, void *uc)
{
    long v;
    MT_LOAD8(v, &scratch[1]);
    (void)v;
    (void)uc;
    printf("CAUGHT %d %lx\n", sig, (unsigned long)si->si_addr);
    siglongjmp(env, 1);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    printf("SCRATCH %lx\n", (unsigned long)scratch);
    mt_print_sites();
    struct sigaction sa = {0}, old;
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigfillset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGSEGV, NULL, &old);
    printf("HANDLER %s\n", old.sa_sigaction == handler ? "ours" : "lost");
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGSEGV);
    sigprocmask(SIG_BLOCK, &s, NULL);
    for (int round = 0; round < 3; round++) {
        if (!sigsetjmp(env, 1)) {
            for (long i = 0; i < n; i++) MT_STORE8(&scratch[0], i);
            *(volatile long *)16 = 1;
            printf("NOT CAUGHT\n");
        }
    }
    fflush(stdout);
    return 0;
}
