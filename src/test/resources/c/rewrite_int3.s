# Hand-written fixture of the int3 fallback (RewriteInt3Test): every at_* instruction is shorter than a jump
# and both it and the instruction after it are places control may reach (a global label, a target of the
# jumps at .Lnever), so no run can move it and the planner leaves it to the fallback. main runs its loop 10
# times and returns cell+16's low byte: 55 (1 + 2 + ... + 10), equal natively and rewritten only if every
# trapped instruction did its work with the registers and flags it found. at_load's trampoline has a tail
# (docs/rewriting.md, "Trampoline tails"): falling through, at_store, at_push, at_pop and at_modify run as
# copies in it without a trap of their own; at_icall, at_rep and leaf each take theirs. Guards of plain
# instructions before and after keep the C start-up's alignment nops out of a jmp rel8's reach (127 bytes):
# those dead bytes would be room for a jump (docs/rewriting.md, "Dead padding") and nothing would trap.
        .data
        .globl cell
cell:
        .quad 0, 0, 0

        .text
guard_before:                           # never called: 64 two-byte instructions, no padding among them
        .rept 64
        xor %eax, %eax
        .endr
        ret

        .globl leaf
leaf:
        ret                             # 1 byte, reached by the call below: a load of the return address

        .globl main
main:
        push %rbx
        mov $10, %ebx
        lea cell(%rip), %rdx
        lea leaf(%rip), %r8
.Lloop:
        mov $5, %eax
        .globl at_load
at_load:
        mov (%rdx), %eax                # 2 bytes: load cell
.L1:
        add $1, %eax
        .globl at_store
at_store:
        mov %eax, (%rdx)                # 2 bytes: store cell
.L2:
        .globl at_push
at_push:
        push %rax                       # 1 byte: store below %rsp
.L3:
        .globl at_pop
at_pop:
        pop %rcx                        # 1 byte: load of the same slot
.L4:
        cmp $0, %ecx                    # ZF clear: the trapped add below must leave the flags it makes
        .globl at_modify
at_modify:
        add %ecx, 8(%rdx)               # 3 bytes: cell+8 read and written, flags set
.L5:
        jz .Lnever                      # never taken: the sum is never 0
        .globl at_icall
at_icall:
        call *%r8                       # 3 bytes: an indirect call, emulated (the return address pushed)
.L6:
        lea 16(%rdx), %rdi
        lea 8(%rdx), %rsi
        mov $4, %ecx
        .globl at_rep
at_rep:
        rep movsb                       # 2 bytes: one block copy, cell+8 to cell+16
.L7:
        dec %ebx
        jnz .Lloop
        mov 16(%rdx), %eax
        pop %rbx
        ret
.Lnever:
        jmp .L1
        jmp .L2
        jmp .L3
        jmp .L4
        jmp .L5
        jmp .L6
        jmp .L7
        ud2
guard_after:                            # never called, as guard_before
        .rept 64
        xor %eax, %eax
        .endr
        ret
        .section .note.GNU-stack,"",@progbits
