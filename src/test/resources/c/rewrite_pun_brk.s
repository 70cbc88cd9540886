# Hand-written fixture of punned jumps whose stub page lies just above the program break (RewritePunBrkTest;
# docs/rewriting.md, "Punned jumps"): as rewrite_pun_fallback.s, at_chained and at_taken are 1-byte
# instructions the int3 fallback takes and the planner puns, at_taken's stub at the one address its rel32
# (the mov after it, 41 bb 50 44) allows, 1.1 GB above it, and at_chained's rel32 reads at_taken's e9 and
# lands 1.3 GB above (e9 41 bb 50): above the break's new place, so the heap the break grows over never holds
# at_chained's stub page, wherever the kernel started the break (a nopw there put it at 0.5 GB, inside that
# heap in about half the layouts); the pair again 16 bytes on. Before any initializer runs, and so before memtrace's runtime applies the plan, the
# resolver of the program's IFUNC (move_break) moves the break to 48 MB below that stub's page: the
# stub then lies within 256 MB above the break, where the runtime refused every stub page before, and above
# the 32 MB it keeps free for the heap now. main then allocates 3072 blocks of 32 KB (96 MB, each below
# malloc's mmap threshold, so from the break's heap until brk meets the stub page, then from the mmap'd
# memory glibc's malloc goes on with), links them, walks them back and checks each block's number, loops
# 10 times without arguments or 1000 with one, and returns cell+8's low byte: 3 added each time, 30 or
# 184; 96 when a block is missing or wrong, 97 or 98 when the break could not be moved.
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
        push %r12
        push %r13
        mov %edi, %r13d
        xor %r12d, %r12d                # the list of blocks: each block's first quad the one before it
        mov $3072, %ebx
.Lalloc:
        mov $32768, %edi
        call malloc
        test %rax, %rax
        jz .Lbad
        mov %r12, (%rax)
        mov %rbx, 8(%rax)               # its number: 3072 down to 1
        mov %rax, %r12
        dec %ebx
        jnz .Lalloc
        mov $1, %ebx                    # the last allocated first
.Lwalk:
        test %r12, %r12
        jz .Lbad
        cmp %rbx, 8(%r12)
        jne .Lbad
        mov (%r12), %r12
        inc %ebx
        cmp $3073, %ebx
        jne .Lwalk
        test %r12, %r12
        jnz .Lbad
        mov $10, %ebx
        cmp $1, %r13d
        je 1f
        mov $1000, %ebx
1:
        lea cell(%rip), %rdx
.Lloop:
        mov $5, %eax
        jmp .La
        .balign 16
.La:
        .globl at_chained
at_chained:
        push %rax                       # 50: rel32 e9 41 bb 50, at_taken's pun
        .globl at_taken
at_taken:
        pop %rcx                        # 59: rel32 41 bb 50 44, one address 1.1 GB on, 48 MB above the break
.Lb:
        .byte 0x41, 0xbb, 0x50, 0x44, 0x00, 0x00 # mov $0x4450, %r11d: at_taken's rel32 41 bb 50 44, at_chained's e9 41 bb 50
        addq $3, 8(%rdx)                # 48 83 42 08 03: a jump of its own
        jmp .Lc
        .balign 16
.Lc:
        .globl at_chained2
at_chained2:
        push %rax                       # as at_chained, its stub 16 bytes after at_chained's, in the same page
        .globl at_taken2
at_taken2:
        pop %rcx                        # as at_taken, its stub in at_taken's page
.Ld:
        .byte 0x41, 0xbb, 0x50, 0x44, 0x00, 0x00
        dec %ebx
        jnz .Lloop
        mov 8(%rdx), %eax
        pop %r13
        pop %r12
        pop %rbx
        ret
.Lbad:
        mov $96, %eax
        pop %r13
        pop %r12
        pop %rbx
        ret
.Lnever:
        jmp at_taken
        jmp .Lb
        jmp at_taken2
        jmp .Ld
        ud2

# The break moved to 48 MB below the page of at_taken's stub (where its rel32 leads with the bytes after it
# as the plan leaves them, the nopw's); runs unrewritten (no initializer has run yet). The kernel starts the
# break at most 1 GB after the end of the bss, below that page less 48 MB, so it is always moved up.
        .type move_break, @gnu_indirect_function
move_break:
        lea at_taken(%rip), %rdi
        movslq 1(%rdi), %rax
        lea 5(%rdi,%rax), %rdi
        and $-4096, %rdi
        sub $0x3000000, %rdi            # 48 MB
        push %rdi
        xor %edi, %edi
        mov $12, %eax                   # brk(0): the break now
        syscall
        pop %rdi
        cmp %rdi, %rax
        ja 2f
        mov $12, %eax                   # brk(target)
        syscall
        cmp %rdi, %rax
        jne 3f
        ret
2:
        mov $98, %edi
        mov $231, %eax                  # exit_group
        syscall
3:
        mov $97, %edi
        mov $231, %eax
        syscall
        ud2

# The resolver of an IFUNC the program's data refers to: ld.so calls it while it relocates the executable,
# before any initializer runs, memtrace's runtime's included (it is linked -z initfirst, so it would run
# before a preinit_array function).
guard_after:                            # never called: more than a jmp rel8 reaches, no padding among it
        .rept 64
        xor %eax, %eax
        .endr
        ud2
        .section .data.rel.ro,"aw"
        .quad move_break
        .section .note.GNU-stack,"",@progbits
