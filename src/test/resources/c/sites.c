/*
 * sites.c: stands in for a program that `memtrace cc` built, for the tests of the .mtr reader. It carries a
 * memtrace_sites section laid out exactly as docs/compiled-in.md says (24-byte entries, PC-relative
 * offsets), pointing at labels in work(): mt_s<N> are where probes would be, mt_i<N> the instrumented
 * instructions. The labels are ordinary (not .L) so the tests find their addresses in .symtab; they are
 * NOTYPE symbols, which code naming ignores. There are no real probes: work() is never run, the tests write
 * the .mtr file such a program would have written and read it back against this table.
 *
 * Built plainly, every site is logged (mode 0, weights 1). With -DSELECTIVE the table is a ma-mode selection:
 * mt_i2 is left out, mt_i1 stands for a class of 2 (aia 3), and block A's sums are refs 4, ma 3, aia 4.
 */
int table[16];
long big[64];

__attribute__((noinline)) void work(void) {
    __asm__ volatile(
        /* block A */
        "mt_s1: nop\n"
        "mt_i1: movl table+4(%%rip), %%eax\n"
        "mt_s2: nop\n"
        "mt_i2: movq %%rax, big+16(%%rip)\n"
        "mt_s3: nop\n"
        "mt_i3: addl $1, table+8(%%rip)\n"
        /* block B */
        "mt_s9: nop\n"
        "mt_i9: movq big(%%rip), %%rcx\n"
        "mt_s4: nop\n"
        "mt_s5: nop\n"
        "mt_s6: nop\n"
        "mt_i4: rep movsb\n"
        "mt_s7: nop\n"
        "mt_s8: nop\n"
        "mt_i5: rep stosq\n"
        ::: "rax", "rcx", "rsi", "rdi", "memory", "cc");
}

/* probe, insn, kind, size, access, flags, weight_ma, weight_aia, block_refs, block_ma, block_aia */
#define ENTRY(s, i, kind, size, access, flags, wma, waia, refs, bma, baia) \
    ".long " #s " - .\n.long " #i " - .\n.byte " #kind ", " #size ", " #access ", " #flags "\n" \
    ".short " #wma ", " #waia ", " #refs ", " #bma ", " #baia ", 0\n"

__asm__(".section memtrace_sites,\"aR\",@progbits\n"
        ".balign 8\n"
#ifdef SELECTIVE
        ENTRY(mt_s1, mt_i1, 1, 4, 0, 0x06, 2, 3, 4, 3, 4)
        ENTRY(mt_s3, mt_i3, 3, 4, 0, 0x04, 1, 1, 0, 0, 0)
        ENTRY(mt_s9, mt_i9, 1, 8, 0, 0x06, 1, 1, 3, 3, 3)
        ENTRY(mt_s4, mt_i4, 4, 1, 0, 0x04, 1, 1, 0, 0, 0)
        ENTRY(mt_s5, mt_i4, 5, 1, 1, 0x04, 1, 1, 0, 0, 0)
        ENTRY(mt_s6, mt_i4, 6, 1, 2, 0x04, 1, 1, 0, 0, 0)
        ENTRY(mt_s7, mt_i5, 4, 8, 0, 0x04, 1, 1, 0, 0, 0)
        ENTRY(mt_s8, mt_i5, 6, 8, 1, 0x04, 1, 1, 0, 0, 0)
#else
        ENTRY(mt_s1, mt_i1, 1, 4, 0, 0x02, 1, 1, 3, 3, 3)
        ENTRY(mt_s2, mt_i2, 2, 8, 0, 0x00, 1, 1, 0, 0, 0)
        ENTRY(mt_s3, mt_i3, 3, 4, 0, 0x00, 1, 1, 0, 0, 0)
        ENTRY(mt_s9, mt_i9, 1, 8, 0, 0x02, 1, 1, 3, 3, 3)
        ENTRY(mt_s4, mt_i4, 4, 1, 0, 0x00, 1, 1, 0, 0, 0)
        ENTRY(mt_s5, mt_i4, 5, 1, 1, 0x00, 1, 1, 0, 0, 0)
        ENTRY(mt_s6, mt_i4, 6, 1, 2, 0x00, 1, 1, 0, 0, 0)
        ENTRY(mt_s7, mt_i5, 4, 8, 0, 0x00, 1, 1, 0, 0, 0)
        ENTRY(mt_s8, mt_i5, 6, 8, 1, 0x00, 1, 1, 0, 0, 0)
#endif
        ".previous\n");

int main(void) { return table[0]; }
