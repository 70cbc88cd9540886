package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The loop rule on a body with an if (branchy.c's threshold(), gcc 12 -O2 -fsanitize=address). */
class LoopShapeTest {
    private static final String THRESHOLD = """
            threshold:
            \ttestq\t%rcx, %rcx
            \tjle\t.L5
            \tmovq\t%rsi, %r15
            \tmovq\t%rdi, %rbp
            \tmovq\t%rdx, %rbx
            \txorl\t%r12d, %r12d
            \t.p2align 4,,10
            .L4:
            \tmovq\t%r15, %rdi
            \tcall\t__asan_load4@PLT
            \tmovl\t(%r15), %eax
            \tcmpl\t%r14d, %eax
            \tjle\t.L3
            \tmovq\t%rbp, %rdi
            \tcall\t__asan_store8@PLT
            \tmovq\t%rax, 0(%rbp)
            .L3:
            \taddq\t$1, %r12
            \taddq\t$4, %r15
            \taddq\t$8, %rbp
            \taddq\t$4, %rbx
            \tcmpq\t%r12, %r13
            \tjne\t.L4
            .L5:
            \tret
            """;

    @Test
    void theCheckBeforeTheIfMovesToTheEntryAndTheOneUnderItStays() {
        CheckRewriter.Result r = CheckRewriter.rewrite(THRESHOLD.lines().toList(), true);
        assertThat(r.checks()).isEqualTo(2);
        assertThat(r.hoisted()).isEqualTo(1);
        String text = String.join("\n", r.lines());
        int entry = text.indexOf("call\t*__memtrace_check_loop@GOTPCREL(%rip)"), label = text.indexOf("\n.L4:");
        assertThat(entry).isPositive().isLessThan(label);
        // in[i]: first r15, last -4 + 4 * r13 - 4 * r12 + r15 (terms in any order); 4 bytes, a load, stride 4
        String head = text.substring(0, label);
        assertThat(head).contains("movabsq\t$-4, %rax\n", "\tmovq\t%r13, %rdx\n\timulq\t$4, %rdx, %rdx\n\taddq\t%rdx, %rax\n",
                "\tmovq\t%r12, %rdx\n\timulq\t$-4, %rdx, %rdx\n\taddq\t%rdx, %rax\n", "\tmovq\t%r15, %rdx\n\taddq\t%rdx, %rax\n",
                "\tmovq\t%rax, %rsi\n\tmovabsq\t$0, %rax\n\tmovq\t%r15, %rdx\n\taddq\t%rdx, %rax\n\tmovq\t%rax, %rdi\n");
        assertThat(head).contains("movabsq\t$" + (4 | 4 << 16) + ", %rdx");
        // out[i] under the if keeps its own (inlined) check
        assertThat(text.substring(label)).contains("\t__memtrace_slow_store8@PLT").doesNotContain("slow_load4");
    }

    @Test
    void aRegisterTheIfWritesIsNoInductionRegister() {
        // %r15 advanced under the if: its value after the body depends on the path
        String moved = THRESHOLD.replace("\tmovq\t%rax, 0(%rbp)\n", "\tmovq\t%rax, 0(%rbp)\n\taddq\t$4, %r15\n");
        assertThat(CheckRewriter.rewrite(moved.lines().toList(), true).hoisted()).isZero();
    }

    @Test
    void aCallOrAnExitInTheBodyKeepsEveryCheck() {
        String call = THRESHOLD.replace("\tmovq\t%rax, 0(%rbp)\n", "\tmovq\t%rax, 0(%rbp)\n\tcall\tfree@PLT\n");
        assertThat(CheckRewriter.rewrite(call.lines().toList(), true).hoisted()).isZero();
        String exit = THRESHOLD.replace("\tjle\t.L3\n", "\tjle\t.L5\n");         // a break out of the body
        assertThat(CheckRewriter.rewrite(exit.lines().toList(), true).hoisted()).isZero();
        String ret = THRESHOLD.replace("\tmovq\t%rax, 0(%rbp)\n", "\tmovq\t%rax, 0(%rbp)\n\tret\n");
        assertThat(CheckRewriter.rewrite(ret.lines().toList(), true).hoisted()).isZero();
    }
}
