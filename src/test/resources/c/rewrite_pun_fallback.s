# Hand-written fixture of punned jumps that cannot be written at run time (RewritePunFallbackTest, PunsTest;
# docs/rewriting.md, "Punned jumps"): at_chained and at_taken are 1-byte instructions the int3 fallback takes
# (global labels, the instruction after each a target of the jumps at .Lnever, so no run can move them), and
# the planner puns both; at_chained2 and at_taken2 are the same pair again, 16 bytes on, so that each of
# their stubs lies 16 bytes after the first pair's, in the same page, which the planner fills from the last
# instruction to the first (a stub of at_taken put after at_taken2's would be out of at_taken's window).
# at_taken's rel32 is the nopw after it (66 0f 1f 44): its stub has one address, 1.1 GB above it. Before any
# initializer runs, and so before memtrace's runtime applies the plan, the resolver of the program's IFUNC
# (take_stub_page) maps that address's page: the runtime finds it taken, at_taken keeps its int3
# ("no stub page"), as does at_taken2, and at_chained (and at_chained2), whose rel32 was planned to read
# at_taken's e9 (e9 66 0f 1f) and reads its int3 instead, keeps its int3 too ("bytes not as planned"). A
# direct jump before each pair ends any trampoline tail (docs/rewriting.md, "Trampoline tails"), so each is
# reached by its own first byte. main loops 10 times without arguments, 1000 times with one, and returns
# cell+8's low byte: 3 added each time, 30 or 184; take_stub_page's mmap failing (the page taken already)
# makes it exit 99 at once.
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
.Lloop:
        mov $5, %eax
        jmp .La
        .balign 16
.La:
        .globl at_chained
at_chained:
        push %rax                       # 50: rel32 e9 66 0f 1f as planned (at_taken's pun), cc 66 0f 1f at run time
        .globl at_taken
at_taken:
        pop %rcx                        # 59: rel32 66 0f 1f 44, one address 1.1 GB on, taken by take_stub_page
.Lb:
        .byte 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 # nopw 0(%rax,%rax,1), spelled out: as would drop the 0 disp8
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
        .byte 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00
        dec %ebx
        jnz .Lloop
        mov 8(%rdx), %eax
        pop %rbx
        ret
.Lnever:
        jmp at_taken
        jmp .Lb
        jmp at_taken2
        jmp .Ld
        ud2

# The page of at_taken's stub, where its rel32 leads with the bytes after it as the plan leaves them (the
# nopw's), mapped read-only with MAP_FIXED_NOREPLACE; runs unrewritten (no initializer has run yet).
        .type take_stub_page, @gnu_indirect_function
take_stub_page:
        lea at_taken(%rip), %rdi
        movslq 1(%rdi), %rax
        lea 5(%rdi,%rax), %rdi
        and $-4096, %rdi
        mov $4096, %esi
        mov $1, %edx                    # PROT_READ
        mov $0x100022, %r10d            # MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE
        mov $-1, %r8
        xor %r9d, %r9d
        mov $9, %eax                    # mmap
        syscall
        cmp %rax, %rdi
        jne 2f
        ret
2:
        mov $99, %edi
        mov $231, %eax                  # exit_group
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
        .quad take_stub_page
        .section .note.GNU-stack,"",@progbits
