package org.memtrace.instrument;

/** Hand-written loops in gcc's shapes, one function each, for the skeleton planner's pieces' tests. */
final class HandLoops {
    private HandLoops() {}

    /** {@code for (i = 0; i != n; i++) b[i] += a[i];} at -O2: bottom-tested, entered by falling in. */
    static final String SIMPLE = """
            \tmovl\t$0, %eax
            .L3:
            \tmovl\t(%rdi,%rax,4), %edx
            \taddl\t%edx, (%rsi,%rax,4)
            \taddq\t$1, %rax
            \tcmpq\t%rcx, %rax
            \tjne\t.L3
            \tret
            """;

    /** {@code if (a[i] == 0) b[i] = 0;}: a block the loaded data decides (a marker's). */
    static final String IF_LOADED = """
            \txorl\t%eax, %eax
            .L3:
            \tmovl\t(%rdi,%rax,4), %edx
            \ttestl\t%edx, %edx
            \tje\t.L2
            \tmovl\t$0, (%rsi,%rax,4)
            .L2:
            \taddq\t$1, %rax
            \tcmpq\t%rcx, %rax
            \tjne\t.L3
            \tret
            """;

    /** {@code if (i <= 3) b[i + 1] = 0;}: a block the loop's own registers decide (a computed condition). */
    static final String IF_COUNTER = """
            \txorl\t%eax, %eax
            .L3:
            \tmovl\t(%rdi,%rax,4), %edx
            \tmovl\t%edx, (%rsi,%rax,4)
            \tcmpq\t$3, %rax
            \tjg\t.L2
            \tmovl\t$0, 4(%rsi,%rax,4)
            .L2:
            \taddq\t$1, %rax
            \tcmpq\t%rcx, %rax
            \tjne\t.L3
            \tret
            """;

    /** Three iterations of one store: fewer records saved than the loop's own cost. */
    static final String THREE = """
            \txorl\t%eax, %eax
            .L3:
            \tmovq\t$0, (%rdi,%rax,8)
            \taddq\t$1, %rax
            \tcmpq\t$3, %rax
            \tjne\t.L3
            \tret
            """;

    /** A row of 64 zeroed per outer iteration, rows 512 bytes apart: an outer loop running an inner one whole. */
    static final String NEST = """
            \txorl\t%ecx, %ecx
            .L3:
            \txorl\t%eax, %eax
            .L2:
            \tmovq\t$0, (%rdi,%rax,8)
            \taddq\t$1, %rax
            \tcmpq\t$64, %rax
            \tjne\t.L2
            \taddq\t$512, %rdi
            \taddq\t$1, %rcx
            \tcmpq\t%rsi, %rcx
            \tjne\t.L3
            \tret
            """;

    /** -Os: tested at the top, the jump back unconditional. */
    static final String TESTED_AT_TOP = """
            \txorl\t%eax, %eax
            .L2:
            \tcmpq\t%rsi, %rax
            \tjge\t.L4
            \tmovq\t$0, (%rdi,%rax,8)
            \taddq\t$1, %rax
            \tjmp\t.L2
            .L4:
            \tret
            """;

    /** -O1: entered by a jump to the test at the bottom. */
    static final String ENTERED_AT_TEST = """
            \txorl\t%eax, %eax
            \tjmp\t.L2
            .L3:
            \tmovq\t$0, (%rdi,%rax,8)
            \taddq\t$1, %rax
            .L2:
            \tcmpq\t%rsi, %rax
            \tjb\t.L3
            \tret
            """;

    /** A list walk per element, left by a break: each address depends on a load. */
    static final String CHASE = """
            \txorl\t%eax, %eax
            .L3:
            \tmovq\t(%rdi,%rax,8), %rdx
            \ttestq\t%rdx, %rdx
            \tje\t.L9
            \tmovq\t(%rdx), %rdx
            \taddq\t$1, %rax
            \tcmpq\t%rsi, %rax
            \tjne\t.L3
            .L9:
            \tret
            """;

    /** A return from the middle of the body. */
    static final String RETURN_IN_BODY = """
            \txorl\t%eax, %eax
            .L3:
            \tmovq\t(%rdi,%rax,8), %rdx
            \ttestq\t%rdx, %rdx
            \tjne\t.L5
            \tret
            .L5:
            \taddq\t$1, %rax
            \tcmpq\t%rsi, %rax
            \tjne\t.L3
            \tret
            """;
}
