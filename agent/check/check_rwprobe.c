/*
 * check_rwprobe.c: the slow path of the checks `memtrace run --check --mode rewrite` puts into an unmodified
 * binary's trampolines (docs/check.md, "memtrace run --check"; the trampolines: org.memtrace.rewrite.CheckProbe).
 *
 * A check trampoline tests the shadow bytes of an access's first and last byte inline (shrx, movzbl, jrcxz:
 * no flag changes) and calls here only when one is not 0, through the quad at MC_RW_SLOT, which mc_init fills
 * with the address of __memtrace_rwcheck when it maps the shadow. The slot is the shadow of the null page's
 * last 64 bytes ([0xffc0, 0x10000), under mmap_min_addr: never mapped), so a trampoline reaches it with an
 * absolute disp32 and no relocation, and the plan and the runtime that applies it (agent/rewrite/rw_apply.c)
 * know nothing of checking. Filled only in a rewrite run (__memtrace_check_init): a --check build keeps the
 * whole null page's shadow 0xfe, which its index test relies on.
 *
 * The call: %rax = the access's address; the return address points at two inline words, a descriptor (the
 * access's size in its low 16 bits, MC_RW_WRITE, MC_RW_RANGE: the size is in %rcx instead, a rep string's
 * count times its element) and the original instruction's address as a 32-bit offset from the second word
 * itself (the linker resolves it; the runtime moves it with the text). __memtrace_rwcheck saves every
 * register it may change and the flags, does the exact test (general registers only, so the program's vector
 * state is untouched), and reports through check_report.c with the original instruction's address as the
 * site (named module+offset, or by a dynamic symbol, as fault mode's run --check names it), and the program's
 * %rbp, from which the report's frames are walked as fault mode prints them (check_names.c); it returns past the
 * two words. A report saves the x87/SSE state (fxsave) around the reporting code, as the loop check does.
 *
 * A stack variable's check (MC_RW_STACK: an indexed access from %rbp in gcc -O0 code, which the trampoline found
 * outside the variable its displacement names, org.memtrace.rewrite.StackSlots) has three more words: the
 * variable's size, its declaration line and the offset of its names ("variable\0function\0"); %rcx holds the
 * access's offset in the variable. It is reported as the compiled-in checker reports a stack variable:
 *   memtrace: stack overflow: <stack:buffer@loop>+40 (a variable of 40 bytes, declared at line 16 of loop)
 *   written 4 bytes, 0 bytes past its end, at direct+4533, thread 27475
 *
 * A global's check (MC_RW_GLOBAL: an access through a pointer from a `lea` of a global in gcc -O0 code,
 * org.memtrace.rewrite.LeaOrigins) has the same words, the names an empty function's; it is reported as the
 * globals of check_symglobals.c are: global overflow: counts+40 (a global of 40 bytes) written 4 bytes, ...
 * A pointer from a `lea` of a variable is a stack variable's check.
 *
 * What it gets wrong: the accesses the inline part passes are not counted (the count would cost a flag-saving
 * increment per access), so the summary counts only the slow paths and the libc checks; a report in continue
 * mode may clobber the upper halves of the program's AVX registers (the reporting code calls libc).
 */
#include <stdint.h>

#include "check.h"
#include "check_block.h"

#define MC_RW_SLOT 0x7fff9ff8ULL      /* MC_SHADOW(0xffc0): the trampolines' `call *0x7fff9ff8` */
#define MC_RW_WRITE 0x10000u
#define MC_RW_RANGE 0x20000u
#define MC_RW_STACK 0x40000u           /* a stack variable's check (StackSlots): three more words follow */
#define MC_RW_GLOBAL 0x80000u          /* a global's check (LeaOrigins): the same three words, no function name */

void __memtrace_rwcheck(void);
int mc_snprintf(char *d, size_t n, const char *fmt, ...);

/* Called by __memtrace_check_init (a rewrite run) once the shadow is mapped and the null page poisoned. */
void mc_rw_init(void)
{
    *(volatile uint64_t *)(uintptr_t)MC_RW_SLOT = (uint64_t)(uintptr_t)__memtrace_rwcheck;
}

static inline uint64_t rw_size(const uint32_t *words, uint64_t rcx)
{
    return (words[0] & MC_RW_RANGE) ? rcx : (words[0] & 0xffff);
}

/* The exact test: nonzero when some byte of the access may not be touched. */
__attribute__((target("general-regs-only"), used))
static int mc_rw_check(uintptr_t addr, const uint32_t *words, uint64_t rcx)
{
    uint64_t size = rw_size(words, rcx);
    if (words[0] & (MC_RW_STACK | MC_RW_GLOBAL)) return 1; /* the trampoline found it outside its object */
    /* mc_shadow_first_bad's 0 means "none bad": an access at address 0 itself (a NULL store) is the one case */
    /* whose first bad byte is 0; the null page's shadow says it is bad */
    return size && (mc_shadow_first_bad(addr, size) != 0 || (addr == 0 && *MC_SHADOW(0) >= 0x80));
}

extern __thread int mc_site_insn __attribute__((tls_model("initial-exec")));
extern __thread uintptr_t mc_site_rbp __attribute__((tls_model("initial-exec")));
static void mc_rw_report_at(uintptr_t addr, const uint32_t *words, uint64_t rcx);

/* rbp: the program's %rbp at the access, from which the report's frames are found (check_stackvars.c's mc_frames_above) */
__attribute__((used))
static void mc_rw_report(uintptr_t addr, const uint32_t *words, uint64_t rcx, uintptr_t rbp)
{
    mc_site_insn = 1;
    mc_site_rbp = rbp;
    mc_rw_report_at(addr, words, rcx);
    mc_site_insn = 0;
}

static void mc_rw_report_at(uintptr_t addr, const uint32_t *words, uint64_t rcx)
{
    uint64_t size = rw_size(words, rcx);
    const char *pc = (const char *)&words[1] + (int32_t)words[1];
    if (words[0] & MC_RW_STACK) { /* %rcx: the access's offset in the variable; words: size, line, names */
        const char *var = (const char *)&words[4] + (int32_t)words[4];
        const char *fn = var + __builtin_strlen(var) + 1;
        struct mc_extent x;
        __builtin_memset(&x, 0, sizeof x);
        x.beg = addr - rcx;
        x.size = words[2];
        x.region = "stack";
        mc_snprintf(x.name, sizeof x.name, "<stack:%s@%s>", var, mc_spell(fn));
        if (words[3]) mc_snprintf(x.desc, sizeof x.desc, "a variable of %u bytes, declared at line %u of %s", words[2], words[3], mc_spell(fn));
        else mc_snprintf(x.desc, sizeof x.desc, "a variable of %u bytes of %s", words[2], mc_spell(fn));
        mc_report_extent(addr, size, (words[0] & MC_RW_WRITE) ? MC_WRITE : MC_READ, pc, NULL, &x);
        return;
    }
    if (words[0] & MC_RW_GLOBAL) { /* %rcx: the offset in the global its pointer came from; words: size, 0, name */
        struct mc_extent x;
        __builtin_memset(&x, 0, sizeof x);
        x.beg = addr - rcx;
        x.size = words[2];
        x.region = "global";
        mc_snprintf(x.name, sizeof x.name, "%s", (const char *)&words[4] + (int32_t)words[4]);
        mc_snprintf(x.desc, sizeof x.desc, "a global of %u bytes", words[2]);
        mc_report_extent(addr, size, (words[0] & MC_RW_WRITE) ? MC_WRITE : MC_READ, pc, NULL, &x);
        return;
    }
    mc_report_access(addr, size, (words[0] & MC_RW_WRITE) ? MC_WRITE : MC_READ, pc, NULL);
}

/* rax: the address; (%rsp): the two words. Saves what the C code may change (the trampoline saved %rax and
 * %rcx itself, and restores them), the flags, and returns past the words. */
__asm__(
    ".text\n"
    ".globl __memtrace_rwcheck\n"
    ".hidden __memtrace_rwcheck\n"
    ".type __memtrace_rwcheck, @function\n"
    "__memtrace_rwcheck:\n"
    "    pushfq\n"
    "    push %rcx\n push %rdx\n push %rsi\n push %rdi\n"
    "    push %r8\n push %r9\n push %r10\n push %r11\n push %rbp\n"
    "    mov %rsp, %rbp\n"
    "    and $-16, %rsp\n"
    "    mov %rax, %rdi\n"
    "    mov 80(%rbp), %rsi\n"          /* the return address: the two words */
    "    mov 64(%rbp), %rdx\n"          /* the program's %rcx (a range's size) */
    "    push %rax\n push %rax\n"
    "    call mc_rw_check\n"
    "    pop %rdi\n pop %rdi\n"
    "    test %eax, %eax\n"
    "    jz 1f\n"
    "    sub $512, %rsp\n"
    "    fxsave (%rsp)\n"
    "    mov 80(%rbp), %rsi\n"
    "    mov 64(%rbp), %rdx\n"
    "    mov (%rbp), %rcx\n"             /* the program's %rbp (the last push) */
    "    call mc_rw_report\n"
    "    fxrstor (%rsp)\n"
    "1:  mov %rbp, %rsp\n"
    "    mov 80(%rsp), %rsi\n"
    "    testl $0xc0000, (%rsi)\n"       /* MC_RW_STACK, MC_RW_GLOBAL: five words */
    "    jz 2f\n"
    "    addq $12, 80(%rsp)\n"
    "2:  addq $8, 80(%rsp)\n"           /* return past the words (the flags come back below) */
    "    pop %rbp\n pop %r11\n pop %r10\n pop %r9\n pop %r8\n"
    "    pop %rdi\n pop %rsi\n pop %rdx\n pop %rcx\n"
    "    popfq\n"
    "    ret\n"
    ".size __memtrace_rwcheck, .-__memtrace_rwcheck\n");
