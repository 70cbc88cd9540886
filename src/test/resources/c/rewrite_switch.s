# Hand-written fixture of functions that jump indirectly (RewriteSwitchTest, RewritePlannerTest; docs/rewriting.md,
# "Indirect jumps"): the planner finds where their jumps land in the data and moves short instructions around
# those places. rel_switch is a position-independent switch (4-byte offsets from rel_table, which the code
# takes with lea), abs_switch one through absolute 8-byte addresses (abs_table: in a -no-pie build plain
# values no relocation names, in a -pie one R_X86_64_RELATIVE addends). Their cases are .L labels, so nothing
# but a table names them: each case 0 is a 2- or 3-byte load and a 3-byte add, a run that must end where case
# 1 begins (case 1's addl would join it otherwise, and a jump to case 1 would run its bytes untraced); case 1
# and 2 are a 4-byte addl and a ret. Offsets the test relies on: abs_switch's cases at +15, +21 and +26.
# own_label computes where it jumps from a label of its own (lea 1f, then adds): nothing in it may move, so
# its short instructions keep their place. main calls both switches with cases 0, 1 and 2, 10 times without
# arguments, 1000 times with one, and returns cell+4's low byte: 4 added per iteration, 40 or 160.
        .data
        .globl cell
cell:
        .long 0, 0, 0, 0, 0, 0, 0, 0

        .section .rodata
        .balign 4
        .globl rel_table
rel_table:
        .long .Lr0-rel_table, .Lr1-rel_table, .Lr2-rel_table

        .section .data.rel.ro, "aw"
        .balign 8
        .globl abs_table
abs_table:
        .quad .La0, .La1, .La2

        .text
        .globl rel_switch
        .type rel_switch, @function
rel_switch:                             # %edi: the case, %rdx: cell
        lea rel_table(%rip), %rcx
        mov %edi, %eax
        movslq (%rcx,%rax,4), %rax
        add %rcx, %rax
        jmp *%rax
.Lr0:
        mov (%rdx), %eax                # 2 bytes: moves with the add, up to .Lr1
        add $1, %eax
.Lr1:
        addl $2, 4(%rdx)                # 4 bytes: moves with the ret
        ret
.Lr2:
        addl $3, 8(%rdx)
        ret
        .size rel_switch, .-rel_switch

        .globl abs_switch
        .type abs_switch, @function
abs_switch:
        lea abs_table(%rip), %rcx
        mov %edi, %eax
        mov (%rcx,%rax,8), %rax
        jmp *%rax
.La0:                                   # +15
        mov 12(%rdx), %eax              # 3 bytes
        add $1, %eax
.La1:                                   # +21
        addl $2, 16(%rdx)
        ret
.La2:                                   # +26
        addl $3, 20(%rdx)
        ret
        .size abs_switch, .-abs_switch

        .globl own_label
        .type own_label, @function
own_label:                              # %edi: how far past 1f it jumps
        lea 1f(%rip), %rax
        add %rdi, %rax
        jmp *%rax
1:
        mov 24(%rdx), %eax              # 3 bytes: 1f+3, the addl, is where a jump of %edi = 3 lands
        addl $1, 28(%rdx)
        ret
        .size own_label, .-own_label

        .globl main
        .type main, @function
main:
        push %rbx
        push %r12
        mov $10, %ebx
        cmp $1, %edi
        je 1f
        mov $1000, %ebx
1:
        lea cell(%rip), %rdx
.Lloop:
        xor %r12d, %r12d
2:
        mov %r12d, %edi
        call rel_switch
        mov %r12d, %edi
        call abs_switch
        inc %r12d
        cmp $3, %r12d
        jne 2b
        dec %ebx
        jnz .Lloop
        mov 4(%rdx), %eax
        pop %r12
        pop %rbx
        ret
        .size main, .-main
        .section .note.GNU-stack, "", @progbits
