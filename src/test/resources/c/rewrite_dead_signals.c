/* Rewrite mode's probes in dead registers (TrampolineWriter's form that saves nothing) under signals
 * (RewriteDeadSignalsTest). Each memory instruction below is followed by overwrites of at least two registers
 * before any read of them, so its probe keeps its address and cursor in those and saves nothing:
 * - pass(): a load and a store a pass over data[], 300 x 4096 times, while a 50 us SIGALRM timer's handler
 *   makes traced accesses of its own (ticks, hist[]): the runtime rewinds a probe the signal stopped;
 * - spin(): a loop that only a SIGALRM handler ends, by siglongjmp, after 40 ticks: what each bump[] holds is
 *   how many of its stores ran;
 * - poke(): a load from an unmapped address, 5 times, each time leaving the SIGSEGV handler by siglongjmp.
 * The inline assembly fixes the instructions and the registers they leave dead; gcc keeps none of its own
 * values in %rax, %rcx, %rdx or %rsi across them (clobbers), so the registers the probe takes are ones
 * gcc's code overwrites before it reads them, whatever it allocates around. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

long data[4096];
volatile long bump[1024];
volatile long ticks, jumps, hist[64];
static sigjmp_buf back;

static void tick(int s) { (void)s; long t = ticks + 1; ticks = t; hist[t & 63] = hist[t & 63] + 1; }
/* the 40th tick stops the timer and drops a tick already pending, so that no later one jumps again */
static void leave(int s)
{
    (void)s;
    jumps = jumps + 1;
    if (jumps < 40) return;
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, 0);
    signal(SIGALRM, SIG_IGN);
    siglongjmp(back, 1);
}
static void segv(int s) { (void)s; siglongjmp(back, 1); }

/* data[i] = data[i] * 3 + r, by a load (dead after it: %rax, which it writes, %rcx and %rdx) and a store  */
/* (dead after it: %rcx, %rdx, %rsi).                                                                      */
__attribute__((noinline)) static void pass(long r)
{
    for (long i = 0; i < 4096; i++)
        __asm__ volatile(".globl pass_load\npass_load:\n\tmov (%1,%2,8),%%rax\n"
                         "\tlea (%%rax,%%rax,2),%%rax\n\tadd %3,%%rax\n\tmov $0,%%ecx\n\tmov $0,%%edx\n"
                         ".globl pass_store\npass_store:\n\tmov %%rax,(%1,%2,8)\n\tmov $0,%%ecx\n\tmov $0,%%edx\n\tmov $0,%%esi\n"
                         : "=m"(data[i]) : "r"(data), "r"(i), "r"(r), "m"(data[i]) : "rax", "rcx", "rdx", "rsi", "memory");
}

/* bump[i] += 1 round and round, by a load and a store like pass's, until leave() jumps out. */
__attribute__((noinline)) static void spin(void)
{
    for (unsigned long i = 0;; i = (i + 1) & 1023)
        __asm__ volatile(".globl spin_load\nspin_load:\n\tmov (%0,%1,8),%%rax\n"
                         "\tlea 1(%%rax),%%rax\n\tmov $0,%%ecx\n\tmov $0,%%edx\n"
                         ".globl spin_store\nspin_store:\n\tmov %%rax,(%0,%1,8)\n\tmov $0,%%ecx\n\tmov $0,%%edx\n\tmov $0,%%esi\n"
                         : : "r"(bump), "r"(i) : "rax", "rcx", "rdx", "rsi", "memory");
}

/* A load from p, which faults (dead after it: %rax, which it writes, %rcx and %rdx). */
__attribute__((noinline)) static long poke(long *p)
{
    long v;
    __asm__ volatile(".globl poke_load\npoke_load:\n\tmov (%1),%%rax\n\tmov $0,%%ecx\n\tmov $0,%%edx\n\tmov %%rax,%0\n"
                     : "=r"(v) : "r"(p) : "rax", "rcx", "rdx", "memory");
    return v;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = tick;
    sigaction(SIGALRM, &sa, 0);
    struct itimerval it = {{0, 50}, {0, 50}}, off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &it, 0);
    for (long r = 0; r < 300; r++) pass(r);
    setitimer(ITIMER_REAL, &off, 0);

    sa.sa_handler = leave;
    sigaction(SIGALRM, &sa, 0);
    if (sigsetjmp(back, 1) == 0) {
        setitimer(ITIMER_REAL, &it, 0);
        spin();
    }
    setitimer(ITIMER_REAL, &off, 0);
    long spun = 0;
    for (int i = 0; i < 1024; i++) spun += bump[i];

    sa.sa_handler = segv;
    sigaction(SIGSEGV, &sa, 0);
    int faults = 0;
    for (int k = 0; k < 5; k++)
        if (sigsetjmp(back, 1) == 0) poke((long *)(long)(16 + 8 * k));
        else faults++;

    long sum = 0, seen = 0;
    for (int i = 0; i < 4096; i++) sum += data[i];
    for (int i = 0; i < 64; i++) seen += hist[i];
    printf("sum %ld faults %d jumps %ld\n", sum, faults, jumps);
    fprintf(stderr, "ticks %ld hist %ld spun %ld\n", ticks, seen, spun);
    return 3;
}
