# Hand-written fixture of dead padding (RewritePaddingTest, docs/rewriting.md "Dead padding"): short memory
# instructions that neither a run nor a tail can take, next to the nops an assembler aligns with.
#   find's ret: a branch lands on it (the loop's je), so no run takes the instructions before it and no
#     tail reaches it; the 7-byte nop after it never runs: the ret's jump covers both.
#   callit's first ret (callit+5): falls in after the jne, 1 byte; the 4-byte nop after it is its room.
#   callit's `call *%rdi` (callit+15, at_call): 2 bytes, a branch target (the jne) with a return landing
#     after it: a `jmp rel8` back to the 5-byte nop at callit+10, whose bytes become the `jmp rel32`.
#   callit's last ret (at_ret2): a return lands on it; the 5-byte nop after it is its room.
# Built -no-pie, as python3 is. ./padding N: N calls of find (on a 3-entry array) and of callit, which calls
# bump on the odd N down to 1; main returns 0 when counter holds those calls, 2 when find miscounted, else 1.
        .data
        .globl counter
counter:
        .quad 0
array:
        .quad 1, 2, 3, 0

        .text
        .globl find
        .type find, @function
find:                                   # %rdi: the array; the entries before the first 0
        .cfi_startproc
        xor %eax, %eax
.Lnext:
        cmpq $0, (%rdi,%rax,8)          # 5 bytes: a jump of its own
        je .Ldone
        inc %rax
        jmp .Lnext
.Ldone:
        .globl at_find_ret
at_find_ret:
        ret
        .cfi_endproc
        .size find, .-find
        .byte 0x0f, 0x1f, 0x80, 0, 0, 0, 0   # nopl 0x0(%rax): dead padding

        .globl callit
        .type callit, @function
callit:                                 # %rdi: a function to call, or 0
        .cfi_startproc
        test %rdi, %rdi
        jne .Lcall
        ret                             # callit+5
        .byte 0x0f, 0x1f, 0x40, 0       # callit+6: nopl 0x0(%rax), dead
        .byte 0x0f, 0x1f, 0x44, 0, 0    # callit+10: nopl 0x0(%rax,%rax,1), dead
.Lcall:
        .globl at_call
at_call:
        call *%rdi                      # callit+15
        .globl at_ret2
at_ret2:
        ret
        .byte 0x0f, 0x1f, 0x44, 0, 0    # dead padding
        .cfi_endproc
        .size callit, .-callit

        .globl bump
        .type bump, @function
bump:
        .cfi_startproc
        addq $1, counter(%rip)
        ret
        .cfi_endproc
        .size bump, .-bump

        .globl main
        .type main, @function
main:
        push %rbx
        push %rbp
        push %r12
        mov 8(%rsi), %rdi
        call atoi@PLT
        mov %eax, %ebx                  # the calls left
        xor %ebp, %ebp                  # the calls of bump
.Lloop:
        test %ebx, %ebx
        jz .Lcheck
        lea array(%rip), %rdi
        call find
        cmp $3, %eax
        jne .Lbad
        xor %edi, %edi
        test $1, %ebx
        jz 1f
        lea bump(%rip), %rdi
        inc %ebp
1:      call callit
        dec %ebx
        jmp .Lloop
.Lcheck:
        xor %eax, %eax
        cmp counter(%rip), %rbp
        setne %al
        jmp .Lout
.Lbad:
        mov $2, %eax
.Lout:
        pop %r12
        pop %rbp
        pop %rbx
        ret
        .size main, .-main
        .section .note.GNU-stack,"",@progbits
