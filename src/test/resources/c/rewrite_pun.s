# Hand-written fixture of punned jumps (RewritePunTest; docs/rewriting.md, "Punned jumps"): every at_*
# instruction is shorter than a jump, and it and the instruction after it are places control may reach (a
# global label, a target of the jumps at .Lnever), so no run can move it and the planner leaves it to the int3
# fallback, then puns it: a jmp rel32 over its own bytes whose high rel32 bytes are the next instruction's,
# chosen here so each window lies 1.3 GB or more above the code (past a non-PIE executable's brk heap, which
# the kernel starts up to 1 GB after the executable's end). A direct jump after each pair ends any trampoline
# tail (docs/rewriting.md, "Trampoline tails"), so each at_* is reached by its own first byte (at_long, a
# jump of its own, is reached by falling through from at_padded's trampoline). main loops 10
# times without arguments, 1000 times with one, and returns cell+8's low byte: 3 added each time, 30 or 184.
# Guards of plain instructions before and after keep the C start-up's alignment nops out of a jmp rel8's
# reach (127 bytes): those dead bytes would be room for a jump (docs/rewriting.md, "Dead padding"), and the
# short instructions here would be patched through them instead of punned.
        .data
        .globl cell
cell:
        .quad 3, 0, 0

        .text
guard_before:                           # never called: 4096 bytes of plain instructions (no padding among them,
        .rept 2047                      # and a page's worth, so every address below keeps its offset in its page)
        xor %eax, %eax
        .endr
        ud2
        .globl main
main:
        push %rbx
        mov $10, %ebx
        cmp $1, %edi
        je 1f
        mov $1000, %ebx
1:
        lea cell(%rip), %rdx
        xor %ecx, %ecx
.Lloop:
        mov $5, %eax
        .globl at_two
at_two:
        mov (%rdx), %eax                # 8b 02: rel32 ?? 83 c1 60, a 256-byte window 1.6 GB on
.La:
        add $0x60, %ecx                 # 83 c1 60
        jmp .Lb
.Lb:
        .globl at_three
at_three:
        add %eax, 8(%rdx)               # 01 42 08: rel32 ?? ?? 34 58, a 64 KB window 1.5 GB on
.Lc:
        xor $0x58, %al                  # 34 58
        jmp .Ld
.Ld:
        .globl at_push
at_push:
        push %rax                       # 50: rel32 at_pop's first byte (e9 punned, cc not) 49 83 c1: below 0
.Le:                                    #   for a non-PIE executable, 1 GB under the code of a PIE
        .globl at_pop
at_pop:
        pop %rcx                        # 59: rel32 49 83 c1 60, one address 1.6 GB on
.Lf:
        add $0x60, %r9                  # 49 83 c1 60
        jmp .Lg
.Lg:
        .globl at_padded
at_padded:
        mov 8(%rdx), %rsi               # 48 8b 72 08: rel32 ?? ?? ?? then at_long's first byte: e9 (its jump),
.Lh:                                    #   a window below 0 of a non-PIE executable, so there a prefix
        .globl at_long                  #   before that e9 (prefix padding): 4f, 1.3 GB on
at_long:
        movl $7, 16(%rdx)               # c7 42 10 07 00 00 00: long enough for a jump of its own
        jmp .Li
.Li:
        .globl at_evict
at_evict:
        mov 8(%rdx), %rsi               # 48 8b 72 08: rel32 ?? ?? ?? then at_evicted's first byte, which its
.Lj:                                    #   own pun makes a prefix (successor eviction, padded): 4f, 1.3 GB on
        .globl at_evicted
at_evicted:
        mov %esi, 20(%rdx)              # 89 72 14: pun 4f e9 ??, rel32 ?? 83 c1 60, 1.6 GB on
.Lk:
        add $0x60, %ecx                 # 83 c1 60
        dec %ebx
        jnz .Lloop
        mov 8(%rdx), %eax
        pop %rbx
        ret
.Lnever:
        jmp .La
        jmp .Lc
        jmp .Le
        jmp .Lf
        jmp .Lh
        jmp .Lj
        jmp .Lk
        ud2
guard_after:                            # never called: more than a jmp rel8 reaches, no padding among it
        .rept 64
        xor %eax, %eax
        .endr
        ud2
        .section .note.GNU-stack,"",@progbits
