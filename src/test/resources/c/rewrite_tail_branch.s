# Hand-written fixture of a tail through a conditional jump (RewriteTailTest), the shape of CPython's
# switches (`cmpl $N,(%rbx); ja default; mov (%rbx),%eax; jmp *T(,%rax,8)`, its hottest int3 place before):
# pick's compare and the ja after it move as a run (3 + 2 bytes); the 2-byte load after them cannot move
# (an indirect jump follows it, which ends no run; the ja before it is a branch) and keeps its int3 or a
# punned jump. The run's trampoline copies the ja (taken: to its own target) and then the load (its tail),
# and goes back to the indirect jump's own jump. Built -no-pie, as python3 is.
#   ./tail_branch N   N calls of pick, the selectors 0, 1, 2, 3, 0, 1, … (3 is above the table: ja taken)
# main returns 0 when counter holds what the calls add (1, 2, 4, 100 for the selectors 0 to 3), else 1.
        .data
        .globl counter
counter:
        .quad 0
        .globl selector
selector:
        .long 0
        .long 0
adds:
        .quad 1, 2, 4, 100

        .section .rodata
        .balign 8
        .globl table
table:
        .quad case0, case1, case2

        .text
        .globl pick
        .type pick, @function
pick:                                   # %rdi: the selector's address
        .cfi_startproc
        cmpl $2, (%rdi)                 # pick+0, 3 bytes: a run with the ja
        ja .Lbig                        # pick+3 (no symbol here: a symbol's value is a branch target)
        mov (%rdi), %eax                # pick+5, 2 bytes: the int3 fallback, or a pun; copied in the run's tail
        jmp *table(,%rax,8)             # pick+7, 7 bytes: a jump of its own
.Lbig:
        .globl at_big
at_big:
        addq $100, counter(%rip)
        ret
case0:
        addq $1, counter(%rip)
        ret
case1:
        addq $2, counter(%rip)
        ret
case2:
        addq $4, counter(%rip)
        ret
        .cfi_endproc
        .size pick, .-pick

        .globl main
        .type main, @function
main:
        push %rbx
        push %rbp
        push %r12
        mov 8(%rsi), %rdi
        call atoi@PLT
        mov %eax, %ebx                  # the calls left
        xor %ebp, %ebp                  # the selector
        xor %r12d, %r12d                # what the calls add
.Lloop:
        test %ebx, %ebx
        jz .Lcheck
        mov %ebp, selector(%rip)
        mov $selector, %edi
        call pick
        add adds(,%rbp,8), %r12
        inc %ebp
        and $3, %ebp
        dec %ebx
        jmp .Lloop
.Lcheck:
        xor %eax, %eax
        cmp counter(%rip), %r12
        setne %al
        pop %r12
        pop %rbp
        pop %rbx
        ret
        .size main, .-main
        .section .note.GNU-stack,"",@progbits
