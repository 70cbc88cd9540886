# Hand-written fixture of the rewrite planner in a stripped module (RewritePlannerTest, RewriteRunTest):
# built with -s, so only .eh_frame's FDEs bound the functions. short_run's short load moves with its
# successors; with_lsda's stays, since its LSDA names a landing pad right after it (the unwinder may enter
# there), and the store after the pad moves with the pad. main calls each 3 times.
        .data
        .globl cell
cell:
        .long 5, 0

        .text
        .globl short_run
        .type short_run, @function
short_run:
        .cfi_startproc
        mov (%rdi), %eax                # 2 bytes: moves with the add and the store after it
        add $1, %eax                    # short_run+2
        mov %eax, 4(%rdi)               # short_run+5, 3 bytes: covered by the run
        ret
        .cfi_endproc
        .size short_run, .-short_run

        .globl with_lsda
        .type with_lsda, @function
with_lsda:
        .cfi_startproc
        .cfi_lsda 0x1b, .Llsda
        mov (%rdi), %eax                # 2 bytes: left, a landing pad follows
.Lpad:
        add $1, %eax                    # with_lsda+2: the landing pad, first of the store's run
        mov %eax, 4(%rdi)               # with_lsda+5: moves with the pad before it and the ret
        ret
        .cfi_endproc
        .size with_lsda, .-with_lsda

        .globl main
        .type main, @function
main:
        .cfi_startproc
        push %rbx
        .cfi_adjust_cfa_offset 8
        mov $3, %ebx
1:
        lea cell(%rip), %rdi
        call short_run
        lea cell(%rip), %rdi
        call with_lsda
        dec %ebx
        jnz 1b
        xor %eax, %eax
        pop %rbx
        .cfi_adjust_cfa_offset -8
        ret
        .cfi_endproc
        .size main, .-main

        .section .gcc_except_table,"a",@progbits
.Llsda:                                 # never used (nothing throws): only read by the planner
        .byte 0xff, 0xff, 0x01          # lpstart: the function's start; no type table; call sites uleb128
        .uleb128 .Lsites_end - .Lsites
.Lsites:
        .uleb128 0, 9                   # a call site covering the function
        .uleb128 .Lpad - with_lsda      # its landing pad
        .uleb128 0                      # a cleanup
.Lsites_end:
        .section .note.GNU-stack,"",@progbits
