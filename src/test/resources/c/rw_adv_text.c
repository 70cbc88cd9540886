/*
 * rw_adv_text.c: code that reads code, for memtrace run --mode rewrite (RewriteAdversarialTest). Hand-written
 * assembly puts a 24-byte table in .text (typed @object) between two functions: its bytes decode as memory
 * instructions, and its last three begin an instruction that would swallow the first bytes of probe_fn after
 * it. sum_table adds the table's bytes; probe_fn loads p[32] and stores it plus one to p[33]. main reads
 * probe_fn's own 19 bytes one by one and compares them with a copy of the same instructions in .rodata (the
 * program checking its own text). Prints "table SUM", "probe P", "text: N of 19 bytes differ, first bytes B B B B"
 * (of probe_fn's four instructions).
 */
#include <stdio.h>

extern long sum_table(void);
extern long probe_fn(long *p);
extern const unsigned char probe_end[], probe_copy[];

#define PROBE_BODY \
    "  mov 0x100(%rdi), %rax\n" /* 7 bytes: a jump of its own */ \
    "  add $1, %rax\n"          /* 4 bytes, no memory access */ \
    "  mov %rax, 0x108(%rdi)\n" /* 7 bytes */ \
    "  ret\n"

__asm__(".text\n"
        ".globl sum_table\n .type sum_table, @function\n"
        "sum_table:\n"
        "  lea table(%rip), %rsi\n"
        "  xor %eax, %eax\n"
        "  xor %ecx, %ecx\n"
        "1: movzbl (%rsi,%rcx), %edx\n"
        "  add %rdx, %rax\n"
        "  inc %rcx\n"
        "  cmp $24, %rcx\n"
        "  jb 1b\n"
        "  ret\n"
        ".size sum_table, .-sum_table\n"
        ".globl table\n .type table, @object\n"
        "table:\n"
        "  .byte 0x48, 0x89, 0x05, 0x11, 0x22, 0x33, 0x00\n" /* mov %rax, 0x332211(%rip) */
        "  .byte 0x89, 0x07\n"                               /* mov %eax, (%rdi) */
        "  .byte 0x48, 0x8b, 0x87, 0x00, 0x01, 0x00, 0x00\n" /* mov 0x100(%rdi), %rax */
        "  .byte 0xff, 0x37\n"                               /* push (%rdi) */
        "  .byte 0x90, 0x90, 0x90\n"
        "  .byte 0x48, 0x8b, 0x05\n"                         /* mov disp32(%rip), %rax: 4 bytes of probe_fn */
        ".size table, .-table\n"
        ".globl probe_fn\n .type probe_fn, @function\n"
        "probe_fn:\n" PROBE_BODY
        ".globl probe_end\n"
        "probe_end:\n"
        ".size probe_fn, .-probe_fn\n"
        ".section .rodata\n"
        ".globl probe_copy\n .type probe_copy, @object\n"
        "probe_copy:\n" PROBE_BODY
        ".size probe_copy, .-probe_copy\n"
        ".text\n");

long cells[40];

int main(void)
{
    printf("table %ld\n", sum_table());
    cells[32] = 41;
    long p = probe_fn(cells);
    printf("probe %ld %ld\n", p, cells[33]);
    const volatile unsigned char *own = (const volatile unsigned char *)(void *)probe_fn;
    unsigned char seen[19];
    int differ = 0;
    for (int i = 0; i < 19; i++) {
        seen[i] = own[i];
        if (seen[i] != probe_copy[i]) differ++;
    }
    printf("text: %d of %d bytes differ, first bytes %02x %02x %02x %02x\n", differ, (int)(probe_end - (const unsigned char *)(void *)probe_fn),
           seen[0], seen[7], seen[11], seen[18]);
    return 0;
}
