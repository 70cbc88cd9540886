/* A program for CcSignalCursorTest: single-steps its own calls to malloc and free (the trap flag set in
 * inline assembly, which no probe precedes, around a direct call) with a SIGTRAP handler that counts the
 * steps (a traced store each). Under memtrace the steps run through the runtime's wrappers too, also
 * through rt_emit_seq's window, where a handler's records would be overwritten: there the steps go on
 * unseen (before, the signal waited for the event's claim blocked, and the next step's trap, blocked,
 * killed the process). Prints the calls made and whether each stepped call counted steps; with STEPS set,
 * the steps on standard error. Argument: the number of malloc/free pairs stepped.
 * What it gets wrong: how many steps a call takes is the runtime's wrapper's business as much as libc's. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile long steps;

static void on_trap(int sig)
{
    (void)sig;
    steps++;
}

/* f(arg) called with the trap flag set, f a libc function (malloc, free: no probe in them, while a probe  */
/* stepped through is rewound at every step, docs/compiled-in.md); its result. The stack pointer is saved in %rbx (callee-saved),  */
/* moved below the red zone and aligned for the call.                                                     */
static __attribute__((noinline)) void *stepped(void *f, void *arg)
{
    void *r;
    __asm__ volatile("mov %%rsp, %%rbx\n\t"
                     "sub $128, %%rsp\n\t"
                     "and $-16, %%rsp\n\t"
                     "mov %2, %%rdi\n\t"
                     "pushfq\n\t"
                     "orq $0x100, (%%rsp)\n\t"
                     "popfq\n\t"
                     "call *%1\n\t"
                     "pushfq\n\t"
                     "andq $-0x101, (%%rsp)\n\t"
                     "popfq\n\t"
                     "mov %%rbx, %%rsp\n\t"
                     : "=a"(r)
                     : "r"(f), "r"(arg)
                     : "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "memory", "cc");
    return r;
}

int main(int argc, char **argv)
{
    long calls = argc > 1 ? atol(argv[1]) : 4;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_trap;
    sigaction(SIGTRAP, &sa, NULL);
    int positive = 1;
    for (long i = 0; i < calls; i++) {
        long before = steps;
        void *p = stepped((void *)malloc, (void *)(100 + i));
        stepped((void *)free, p);
        positive &= steps > before;
    }
    printf("%ld %d\n", calls, positive);
    if (getenv("STEPS")) fprintf(stderr, "steps %ld\n", steps);
    return 0;
}
