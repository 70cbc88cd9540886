/* sigaltstack: a SIGSEGV handler on the alternate stack recovers from a stack overflow; a SIGUSR1
 * handler installed with SA_ONSTACK runs on the alternate stack. Both stacks come from the heap. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static sigjmp_buf back;
static char *alt;
static size_t alt_size = 64 * 1024;
static volatile int on_alt;
int depth_reached;

static void on_segv(int sig)
{
    siglongjmp(back, 1);
}

static void on_usr1(int sig)
{
    char here;
    if (&here >= alt && &here < alt + alt_size) on_alt++;
}

static int recurse(int n)
{
    volatile char pad[1024];
    pad[0] = (char)n;
    depth_reached = n;
    return recurse(n + 1) + pad[0];
}

int main(void)
{
    struct rlimit rl = {8 << 20, 8 << 20};
    setrlimit(RLIMIT_STACK, &rl);
    alt = malloc(alt_size);
    stack_t ss = {.ss_sp = alt, .ss_size = alt_size, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) { perror("sigaltstack"); return 1; }
    stack_t now;
    sigaltstack(NULL, &now);
    printf("altstack set: %d\n", now.ss_sp == alt && now.ss_size == alt_size && now.ss_flags == 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    for (int i = 0; i < 10; i++) raise(SIGUSR1);
    printf("on the alternate stack: %d of 10\n", on_alt);
    sa.sa_handler = on_segv;
    sa.sa_flags = SA_ONSTACK | SA_NODEFER;
    sigaction(SIGSEGV, &sa, NULL);
    if (sigsetjmp(back, 1) == 0) recurse(0);
    printf("recovered from the stack overflow: %d\n", depth_reached > 1000);
    return 0;
}
