/* A div whose divisor is a traced global that is zero: the divide error must reach the program's SIGFPE
 * handler at the program's own div instruction, with the program's own registers (under memtrace the div
 * runs as a redirected copy that borrows a register the div does not use: rcx here, as rax and rdx are
 * the div's own). Prints where the handler saw the error and what rcx held. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

long zero;
extern char divide_here[];

static void on_fpe(int sig, siginfo_t *si, void *ucv) {
    ucontext_t *uc = ucv;
    printf("SIGFPE at %s, rcx %llx\n", (char *)uc->uc_mcontext.gregs[REG_RIP] == divide_here ? "the div" : "another address",
           (unsigned long long)uc->uc_mcontext.gregs[REG_RCX]);
    exit(0);
}

int main(void) {
    struct sigaction sa = {0};
    sa.sa_sigaction = on_fpe;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGFPE, &sa, 0);
    __asm__ volatile("mov $0x5678, %%rcx\n\tmov $1, %%rax\n\txor %%edx, %%edx\n"
                     ".globl divide_here\ndivide_here:\n\tdivq zero(%%rip)" ::: "rax", "rcx", "rdx");
    return 1;
}
