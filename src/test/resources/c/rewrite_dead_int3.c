/* Rewrite mode's probes in dead registers next to the int3 fallback, under signals (RewriteDeadSignalsTest).
 * walk() (hand-written below) does data[i] = data[i] * 3 + 1 for each of 2048 elements, by a load that no jump
 * can patch (trap_load: 3 bytes, it and the instruction after it named by symbols, no dead padding within a
 * jmp rel8's reach, and the bytes after it aim a punned jump into the brk heap's room, which Puns refuses) and a
 * store of 8 bytes that a jump patches (jump_store); each is followed by overwrites of two registers before any
 * read, so both trampolines' probes keep their address and cursor in those and save nothing. main walks 40
 * times while a 50 us SIGALRM timer's handler makes traced accesses of its own (ticks, hist[]): signals land in
 * the trap's handler, in the trampoline it sends the thread to, and, under --access-stacks, in the emulation of
 * those trampolines' first `lea` (rw_arm.c). Then poke() loads from an unmapped address 5 times by another
 * such load (poke_load, trapped, dead after it: %rax and %rcx), each time leaving the SIGSEGV handler by
 * siglongjmp. Output: "sum S faults 5" on stdout, "ticks T hist H" on stderr, status 3. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

long data[2048];
volatile long ticks, hist[64];

static void tick(int s) { (void)s; long t = ticks + 1; ticks = t; hist[t & 63] = hist[t & 63] + 1; }

static sigjmp_buf back;
static void segv(int s) { (void)s; siglongjmp(back, 1); }

void walk(long *d, long n);
long poke(long *p);

/* guards of plain 2-byte instructions keep the alignment nops of gcc's functions out of a jmp rel8's reach */
__asm__("        .text\n"
        "guard_before:\n"
        "        .rept 64\n        xor %eax, %eax\n        .endr\n        ret\n"
        "        .globl walk\n        .type walk, @function\n"
        "walk:\n" /* %rdi: data, %rsi: n */
        "        xor %r8d, %r8d\n"
        ".Lwalk:\n"
        "        lea (%rdi,%r8,8), %rdx\n"
        "        .globl trap_load\n"
        "trap_load:\n"
        "        mov (%rdx), %rax\n" /* 48 8b 02, dead after it: %rax (its own), %rcx */
        "        .globl trap_next\n"
        "trap_next:\n"
        "        mov $0, %ecx\n" /* b9 00 00 ...: a punned jump's rel32 would be 0x00b9xxxx */
        "        lea 1(%rax,%rax,2), %rax\n"
        "        .globl jump_store\n"
        "jump_store:\n"
        "        mov %rax, data(,%r8,8)\n" /* 8 bytes, dead after it: %rcx, %r9 */
        "        mov $0, %ecx\n"
        "        mov $0, %r9d\n"
        "        add $1, %r8\n"
        "        cmp %rsi, %r8\n"
        "        jne .Lwalk\n"
        "        ret\n"
        "        .size walk, .-walk\n"
        "        .globl poke\n        .type poke, @function\n"
        "poke:\n" /* %rdi: an unmapped address */
        "        xor %eax, %eax\n"
        "        .globl poke_load\n"
        "poke_load:\n"
        "        mov (%rdi), %rax\n" /* 48 8b 07, faults; dead after it: %rax (its own), %rcx */
        "        .globl poke_next\n"
        "poke_next:\n"
        "        mov $0, %ecx\n"
        "        ret\n"
        "        .size poke, .-poke\n"
        "guard_after:\n"
        "        .rept 64\n        xor %eax, %eax\n        .endr\n        ret\n");

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = tick;
    sigaction(SIGALRM, &sa, 0);
    struct itimerval it = {{0, 50}, {0, 50}}, off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &it, 0);
    for (int r = 0; r < 40; r++) walk(data, 2048);
    setitimer(ITIMER_REAL, &off, 0);
    sa.sa_handler = segv;
    sigaction(SIGSEGV, &sa, 0);
    int faults = 0;
    for (int k = 0; k < 5; k++)
        if (sigsetjmp(back, 1) == 0) poke((long *)(long)(16 + 8 * k));
        else faults++;
    long sum = 0, seen = 0;
    for (int i = 0; i < 2048; i++) sum += data[i];
    for (int i = 0; i < 64; i++) seen += hist[i];
    printf("sum %ld faults %d\n", sum, faults);
    fprintf(stderr, "ticks %ld hist %ld\n", ticks, seen);
    return 3;
}
