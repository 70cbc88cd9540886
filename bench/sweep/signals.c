/* Rewrite sweep (bench/rewrite-sweep.sh): signal handlers (SIGALRM from a timer, SIGSEGV on an alternate
 * stack left by siglongjmp), setjmp/longjmp, getcontext/makecontext/swapcontext, vfork+exec, fork, dlopen.
 * Prints a deterministic report; exit status 5. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

static volatile sig_atomic_t ticks;
static sigjmp_buf segv_jump;
static jmp_buf plain_jump;
static ucontext_t main_ctx, co_ctx;
static int co_steps;

static void on_alarm(int sig) { (void)sig; ticks++; }

static void on_segv(int sig, siginfo_t *si, void *uc) {
    (void)sig; (void)uc;
    char probe;
    int on_alt = (uintptr_t)&probe > 0x1000 && si->si_addr == (void *)16;
    siglongjmp(segv_jump, on_alt ? 2 : 1);
}

static void coroutine(void) {
    for (int i = 0; i < 3; i++) {
        co_steps += 10;
        swapcontext(&co_ctx, &main_ctx);
    }
}

__attribute__((noinline)) static void deep(int n) {
    if (n == 0) longjmp(plain_jump, 7);
    deep(n - 1);
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 2000}, {0, 2000}};
    setitimer(ITIMER_REAL, &it, NULL);
    volatile unsigned long spin = 0;
    while (ticks < 5) spin++;
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("alarms: %d\n", ticks >= 5);

    stack_t ss = {.ss_sp = malloc(65536), .ss_size = 65536, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    sa.sa_handler = NULL;
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, NULL);
    int hits = 0;
    for (int i = 0; i < 3; i++) {
        int r = sigsetjmp(segv_jump, 1);
        if (r == 0) {
            volatile int *bad = (volatile int *)16;
            hits += *bad;
        } else {
            hits += r;
        }
    }
    printf("segv recovered: %d\n", hits);

    int v = setjmp(plain_jump);
    if (v == 0) deep(20);
    printf("longjmp: %d\n", v);

    static char co_stack[65536];
    getcontext(&co_ctx);
    co_ctx.uc_stack.ss_sp = co_stack;
    co_ctx.uc_stack.ss_size = sizeof co_stack;
    co_ctx.uc_link = &main_ctx;
    makecontext(&co_ctx, coroutine, 0);
    for (int i = 0; i < 3; i++) swapcontext(&main_ctx, &co_ctx);
    printf("coroutine: %d\n", co_steps);

    fflush(stdout);
    pid_t p = vfork();
    if (p == 0) {
        execl("/bin/echo", "echo", "vforked echo", (char *)NULL);
        _exit(127);
    }
    int st;
    waitpid(p, &st, 0);
    printf("vfork child: %d\n", WEXITSTATUS(st));
    fflush(stdout);
    p = fork();
    if (p == 0) {
        printf("forked child %d\n", 2 + 2);
        exit(9);
    }
    waitpid(p, &st, 0);
    printf("fork child: %d\n", WEXITSTATUS(st));

    void *m = dlopen("libm.so.6", RTLD_NOW);
    double (*cosine)(double) = m ? (double (*)(double))dlsym(m, "cos") : NULL;
    printf("dlopen cos(0)=%.1f\n", cosine ? cosine(0.0) : -1.0);
    if (m) dlclose(m);
    fprintf(stderr, "done\n");
    return 5;
}
