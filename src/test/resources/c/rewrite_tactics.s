# Hand-written fixture of the rewrite planner's tactics (RewritePlannerTest, RewriteRunTest). Each global
# at_* label names an instruction whose decision the tests check; main runs its loop 10 times.
        .data
        .globl counter
counter:
        .long 0, 0, 0
buf:
        .zero 16

        .text
        .globl helper
        .type helper, @function
helper:
at_helper:
        mov counter+8(%rip), %eax       # 6 bytes, RIP-relative load: a jump over itself
        ret
        .size helper, .-helper

        .globl indirect
        .type indirect, @function
indirect:                               # a tail call through %rsi: it moves (nothing in the data names its middle)
at_indirect:
        mov (%rdi), %eax                # 2 bytes
        add $1, %eax
        jmp *%rsi
        .size indirect, .-indirect

        .globl tail
        .type tail, @function
tail:                                   # offsets from tail, since every label counts as a branch target
        mov counter(%rip), %eax         # +0, 6 bytes: a jump over itself
        lea counter(%rip), %rdx         # +6
        mov $0, %ecx                    # +13
3:
        add $1, %ecx                    # +18: the run of the cmp after it starts here (taken backward)
        cmp (%rdx), %ecx                # +21, 2 bytes: runs 7 times (counter is 7)
        jl 3b                           # +23: ends the run, written anew in the trampoline
        add $2, %ecx                    # +25: the run of the ret starts here (taken backward)
        mov %ecx, %eax                  # +28
        ret                             # +30
        .size tail, .-tail

        .globl main
        .type main, @function
main:
        push %rbp
        mov %rsp, %rbp
        sub $16, %rsp
        mov $10, %ecx
        lea counter(%rip), %rdx
1:
        .globl at_long
at_long:
        movl $7, counter(%rip)          # 10 bytes: a jump over itself
        .globl at_short
at_short:
        mov (%rdx), %eax                # 2 bytes: moves with the add after it
        add $1, %eax
        mov %eax, 4(%rdx)               # at_short+5, 3 bytes, a memory instruction: joins the run (no label:
                                        # every symbol counts as a place control may reach)
        cmp $100, %ecx
        je .Ltarget                     # never taken: makes .Ltarget a branch target
        .globl at_blocked
at_blocked:
        mov (%rdx), %esi                # 2 bytes and a branch target after it: left
.Ltarget:
        .globl at_call
at_call:
        call helper                     # e8 rel32: emulated, its push recorded
        dec %ecx
        jnz 1b
        call tail
        .globl at_icall
at_icall:
        lea helper(%rip), %rax          # 7 bytes, no access: taken into the run of the call after it
        call *%rax                      # at_icall+7, 2 bytes: emulated (its push recorded, then jmp *%rax)
        lea buf(%rip), %rdi
        lea buf+8(%rip), %rsi
        .globl at_rep
at_rep:
        mov $4, %ecx                    # 5 bytes: taken into the run of the rep movsb after it
        rep movsb                       # at_rep+5: one block copy of 4 bytes, buf+8 to buf
        .globl at_fs
at_fs:
        mov %fs:0x28, %rax              # 9 bytes, %fs operand: a jump over itself, thread pointer added
        .globl at_tp
at_tp:
        mov %fs:0, %rax                 # 9 bytes: the thread pointer, loaded from %fs:0
        xor %edx, %edx                  # at_tp+9
        mov %fs:(%rdx), %rcx            # at_tp+11, 4 bytes: a short %fs load, moved with its successor
        mov (%rax), %rsi                # at_tp+15, 3 bytes: a plain load at the thread pointer (covered)
        lea buf(%rip), %rdi
        xor %eax, %eax
        .globl at_stos
at_stos:
        mov $2, %ecx                    # 5 bytes: taken into the run of the rep stosq after it
        rep stosq                       # at_stos+5, 3 bytes: one block store of 16 bytes at buf
        mov $0, %eax
        leave
        ret
        .size main, .-main
        .section .note.GNU-stack,"",@progbits
