# Hand-written fixture of trampoline tails (RewriteInt3Test): at_add is long enough for a jump; the pop and
# ret after it are short, and at_pop is also a branch target (jump_in's jmp), so no run can move them and
# the planner leaves both to the int3 fallback. at_add's trampoline goes on to run copies of them (its tail),
# so falling through from at_add takes no trap; jumping in at at_pop takes one (its trampoline's tail runs
# the ret). The number of arguments picks the path:
#   ./tail          1,000 calls of bump (falling through)
#   ./tail x        1,000 calls of jump_in (jumping in)
#   ./tail x x      300,000 calls of bump and 1,000 of jump_in under a 20 µs SIGALRM timer whose handler
#                   stores (a patched instruction), so signals land inside the tails' probes
#   ./tail x x x    no calls (the traps the rest of the program takes)
# main returns 0 when counter holds exactly the calls made (and, with the timer, the handler ran), else 1.
        .data
        .globl counter
counter:
        .quad 0
        .globl hits
hits:
        .quad 0
timer:                                  # struct itimerval: interval and first expiry, 20 µs each (real time:
                                        # a CPU-time timer ticks at the scheduler's rate)
        .quad 0, 20, 0, 20
stop:
        .quad 0, 0, 0, 0
action:                                 # struct sigaction: handler, mask (128 bytes), flags, restorer
        .quad tick
        .fill 16, 8, 0
        .quad 0x10000000                # SA_RESTART
        .quad 0

        .text
        .globl bump
bump:                                   # CFI, so the push and the mov move to a trampoline together (a run)
        .cfi_startproc
        push %r12
        mov %rdi, %r12
        .globl at_add
at_add:
        addl $1, counter(%rip)          # 7 bytes: a jump to its trampoline, whose tail runs the pop and ret
        .globl at_pop
at_pop:
        pop %r12                        # 2 bytes, a branch target: the int3 fallback
        .globl at_ret
at_ret:
        ret                             # 1 byte: the int3 fallback
        .cfi_endproc

        .globl jump_in
jump_in:
        .cfi_startproc
        push %r12
        mov %rdi, %r12
        .globl at_add2
at_add2:
        addl $1, counter(%rip)          # patched too; the jmp after it is no follower a tail copies
        jmp at_pop
        .cfi_endproc

        .globl tick
tick:                                   # the SIGALRM handler: its record lands inside an interrupted probe
        addq $1, hits(%rip)
        ret

        .globl main
main:
        push %rbx
        push %rbp
        push %r12
        mov %edi, %ebp                  # argc
        xor %r12d, %r12d                # the calls made (none with three arguments: main's r12 is libc's)
        cmp $4, %edi
        jae .Lcompare                   # no calls
        cmp $3, %edi
        jne .Lno_timer
        mov $14, %edi                   # SIGALRM
        lea action(%rip), %rsi
        xor %edx, %edx
        call sigaction@PLT
        xor %edi, %edi                  # ITIMER_REAL
        lea timer(%rip), %rsi
        xor %edx, %edx
        call setitimer@PLT
.Lno_timer:
        cmp $2, %ebp
        je .Ljumps
        mov $1000, %ebx
        cmp $3, %ebp
        jne .Lbumps
        mov $300000, %ebx
.Lbumps:
        call bump
        inc %r12d
        dec %ebx
        jnz .Lbumps
        cmp $3, %ebp
        jne .Lcheck
.Ljumps:
        mov $1000, %ebx
.Ljump:
        call jump_in
        inc %r12d
        dec %ebx
        jnz .Ljump
.Lcheck:
        cmp $3, %ebp
        jne .Lcompare
        xor %edi, %edi                  # the timer off
        lea stop(%rip), %rsi
        xor %edx, %edx
        call setitimer@PLT
        cmpq $0, hits(%rip)
        je .Lwrong
.Lcompare:
        mov counter(%rip), %rax
        cmp %r12, %rax
        jne .Lwrong
        xor %eax, %eax
        jmp .Lout
.Lwrong:
        mov $1, %eax
.Lout:
        pop %r12
        pop %rbp
        pop %rbx
        ret
        .section .note.GNU-stack,"",@progbits
