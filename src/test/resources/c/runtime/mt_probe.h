/*
 * Tests only: the probe of docs/compiled-in.md ("The probe") written by hand, so a plain C program makes
 * the same records a program rewritten by `memtrace cc` makes, and libmemtrace-rt.so can be tested alone.
 *
 *     long v;
 *     MT_LOAD8(v, p);     // probe of an 8-byte load through p, then the load itself: v = *(long *)p
 *     MT_STORE8(p, v);    // probe of an 8-byte store, then the store
 *
 * Each expansion is one site: a `memtrace_sites` entry (kind, size, flags 0x02) as the rewriter writes it,
 * and the site's address in the section `mt_test_sites`, so the program can print its sites in order
 * (mt_print_sites) and a test can expect exact {address, site} slots. The operand is a register, never
 * %rsp-based, so no 152 is added.
 */
#ifndef MT_PROBE_H
#define MT_PROBE_H

#include <stdio.h>

#define MT_PROBE_ASM(kind, size) \
    "lea -128(%%rsp), %%rsp\n\t" \
    "push %%rax\n\t" \
    "push %%rdx\n\t" \
    "push %%r11\n" \
    ".Lmt_s%=:\n\t" \
    "lea (%[p]), %%rax\n\t" \
    "mov __memtrace_cursor@gottpoff(%%rip), %%r11\n\t" \
    "mov %%fs:(%%r11), %%rdx\n\t" \
    "mov %%rax, (%%rdx)\n\t" \
    "lea .Lmt_s%=(%%rip), %%rax\n\t" \
    "mov %%rax, 8(%%rdx)\n\t" \
    "lea 16(%%rdx), %%rdx\n\t" \
    "mov %%rdx, %%fs:(%%r11)\n\t" \
    "pop %%r11\n\t" \
    "pop %%rdx\n\t" \
    "pop %%rax\n\t" \
    "lea 128(%%rsp), %%rsp\n" \
    ".pushsection memtrace_sites,\"aR\",@progbits\n\t" \
    ".balign 8\n\t" \
    ".long .Lmt_s%= - .\n\t" \
    ".long .Lmt_i%= - .\n\t" \
    ".byte " #kind ", " #size ", 0, 0x02\n\t" \
    ".short 1, 1, 1, 1, 1, 0\n\t" \
    ".popsection\n\t" \
    ".pushsection mt_test_sites,\"aw\",@progbits\n\t" \
    ".quad .Lmt_s%=\n\t" \
    ".popsection\n" \
    ".Lmt_i%=:\n\t"

#define MT_LOAD8(dst, ptr) \
    __asm__ volatile(MT_PROBE_ASM(1, 8) "movq (%[p]), %[v]" : [v] "=r"(dst) : [p] "r"(ptr) : "memory")
#define MT_STORE8(ptr, value) \
    __asm__ volatile(MT_PROBE_ASM(2, 8) "movq %[v], (%[p])" : : [p] "r"(ptr), [v] "r"((long)(value)) : "memory")

extern char __start_mt_test_sites[], __stop_mt_test_sites[];

/* "SITE <index> <hex address>" for every site of the program, in the order the compiler emitted them. */
static inline void mt_print_sites(void)
{
    unsigned long *s = (unsigned long *)__start_mt_test_sites;
    for (int i = 0; s + i < (unsigned long *)__stop_mt_test_sites; i++) printf("SITE %d %lx\n", i, s[i]);
}

#endif
