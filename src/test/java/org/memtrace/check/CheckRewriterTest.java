package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The pruning rules on gcc's own -O2 output shapes (copied from `gcc -fsanitize=address` runs). */
class CheckRewriterTest {
    private static List<String> lines(String text) {
        return text.lines().toList();
    }

    private static final String GEMM = """
            main:
            \tpushq\t%rbx
            .L6:
            \tmovq\t%r12, %rdi
            \tmovq\t%r13, %rbx
            \tcall\t__asan_load8@PLT
            \tmovsd\t(%r12), %xmm2
            \tmovq\t16(%rsp), %r15
            \tmovsd\t%xmm2, 8(%rsp)
            \t.p2align 4,,10
            \t.p2align 3
            .L5:
            \tmovq\t%r15, %rdi
            \taddq\t$8, %r15
            \tcall\t__asan_load8@PLT
            \tmovsd\t-8(%r15), %xmm1
            \tmovq\t%rbx, %rdi
            \taddq\t$8, %rbx
            \tmovsd\t%xmm1, (%rsp)
            \tcall\t__asan_load8@PLT
            \tmovsd\t8(%rsp), %xmm0
            \tmulsd\t-8(%rbx), %xmm0
            \taddsd\t(%rsp), %xmm0
            \tmovsd\t%xmm0, -8(%r15)
            \tcmpq\t%rbp, %r15
            \tjne\t.L5
            \tjmp\t.L6
            """;

    @Test
    void aLoopsAffineChecksAllMoveToItsEntry() {
        CheckRewriter.Result r = CheckRewriter.rewrite(lines(GEMM), true);
        assertThat(r.checks()).isEqualTo(3);
        assertThat(r.hoisted()).isEqualTo(2);
        assertThat(r.loops()).isEqualTo(2);
        String text = String.join("\n", r.lines());
        int entry = text.indexOf("call\t*__memtrace_check_loop@GOTPCREL(%rip)"), label = text.indexOf("\n.L5:");
        assertThat(entry).isPositive().isLessThan(label);
        // c[i][j]: first = r15, last = r15 - (r15 + 8 - rbp) * 1 + 0 = rbp - 8; b[k][j]: first rbx, last rbx + rbp - r15 - 8
        assertThat(text.substring(0, label)).contains("movabsq\t$-8, %rax\n\tmovq\t%rbp, %rdx\n\taddq\t%rdx, %rax\n\tmovq\t%rax, %rsi");
        assertThat(text.substring(label)).doesNotContain("__asan_load8");
    }

    private static final String FIELDS = """
            sum:
            \tpushq\t%rbp
            \tpushq\t%rbx
            \tmovq\t%rdi, %rbx
            \tsubq\t$8, %rsp
            \tcall\t__asan_load8@PLT
            \tleaq\t8(%rbx), %rdi
            \tmovq\t(%rbx), %rbp
            \tcall\t__asan_load8@PLT
            \tleaq\t16(%rbx), %rdi
            \taddq\t8(%rbx), %rbp
            \tcall\t__asan_store4@PLT
            \tmovl\t$1, 16(%rbx)
            \tleaq\t35(%rsp), %rdi
            \tcall\t__asan_load1@PLT
            \tleaq\t40(%rsp), %rdi
            \tcall\t__asan_load1@PLT
            \tleaq\t24(%rbx), %rdi
            \tcall\tfree@PLT
            \tleaq\t32(%rbx), %rdi
            \tcall\t__asan_load8@PLT
            \tret
            """;

    @Test
    void constantOffsetsFromOneBaseShareOneGroupCheckUntilACall() {
        CheckRewriter.Result r = CheckRewriter.rewrite(lines(FIELDS), true);
        assertThat(r.checks()).isEqualTo(6);
        assertThat(r.merged()).as("the two later field checks").isEqualTo(2);
        assertThat(r.ranges()).isEqualTo(1);
        String text = String.join("\n", r.lines());
        // at the first check: the base is %rdi itself; the descriptor lists the three accesses
        // counted inline; its span of 20 bytes is tested inline (the 8 shadow bytes from its first, shifted past
        // its last), the runtime called only when that shadow is not all 0
        assertThat(text).contains("\tmovq\t__memtrace_check_grouped@gottpoff(%rip), %rcx\n\tincq\t%fs:(%rcx)\n"
                + "\taddq\t$3, %fs:8(%rcx)\n\tmovq\t%rdi, %rax\n\tshrq\t$3, %rax\n\tleaq\t19(%rdi), %rcx\n\tshrq\t$3, %rcx\n"
                + "\tsubq\t%rax, %rcx\n\tmovq\t2147450880(%rax), %rax\n\txorl\t$7, %ecx\n\tshll\t$3, %ecx\n\tshlq\t%cl, %rax\n"
                + "\ttestq\t%rax, %rax\n\tje\t.Lmtc_gd0\n\tleaq\t.Lmtc_g0(%rip), %rsi\n\tcall\t__memtrace_slow_group@PLT\n"
                + ".Lmtc_gd0:");
        assertThat(text).contains(".Lmtc_g0:\n\t.long\t3, 20\n\t.long\t0, 8\n\t.long\t8, 8\n\t.long\t16, 260");
        // stack slots keep their own checks (redzones lie between), and a call ends the block; the two stack
        // checks are one run, counted at once at its first (whose slow path marks the one check left after it)
        String count = "%rdi\n\tmovq\t__memtrace_check_inline@gottpoff(%rip), %rcx\n\t";
        String shadow = "\tmovq\t%rdi, %rax\n\tshrq\t$3, %rax\n";
        // one byte: its shadow byte 0 in line, falling through; out of line (subsection 1) a partial granule's k
        // with the byte's offset under k, else the runtime, entered as if called from the line after the test
        // (.Lmtc_q0, a site; the run's rest mark after it)
        String test = shadow + "\tmovsbl\t2147450880(%rax), %ecx\n\ttestl\t%ecx, %ecx\n";
        String partial = "\tmovl\t%edi, %eax\n\tandl\t$7, %eax\n\tcmpl\t%ecx, %eax\n";
        assertThat(text).contains("leaq\t35(%rsp), " + count + "addq\t$2, %fs:(%rcx)\n" + test + "\tjne\t.Lmtc_o0\n.Lmtc_q0:\n"
                + "\tnopl\t1836318721(%rax)\n\t.subsection\t1\n.Lmtc_o0:\n" + partial + "\tjl\t.Lmtc_q0\n.Lmtc_x0:\n"
                + "\tleaq\t.Lmtc_q0(%rip), %rcx\n\tpushq\t%rcx\n\tjmp\t__memtrace_slow_load1@PLT\n\t.subsection\t0\n");
        assertThat(text).contains("leaq\t40(%rsp), %rdi\n" + test + "\tjne\t.Lmtc_o1\n.Lmtc_q1:\n\t.subsection\t1\n.Lmtc_o1:\n"
                + partial + "\tjl\t.Lmtc_q1\n.Lmtc_x1:\n\tleaq\t.Lmtc_q1(%rip), %rcx\n\tpushq\t%rcx\n\tjmp\t__memtrace_slow_load1@PLT\n");
        // eight bytes: the shadow word of its granule and the next one 0 (wherever it starts), else one that starts
        // its granule needs that granule's byte 0 only, and one that does not goes to the runtime
        assertThat(text).contains("leaq\t32(%rbx), " + count + "incq\t%fs:(%rcx)\n" + shadow + "\tcmpw\t$0, 2147450880(%rax)\n"
                + "\tjne\t.Lmtc_o2\n.Lmtc_q2:\n\t.subsection\t1\n.Lmtc_o2:\n\ttestb\t$7, %dil\n\tjne\t.Lmtc_x2\n"
                + "\tcmpb\t$0, 2147450880(%rax)\n\tje\t.Lmtc_q2\n.Lmtc_x2:\n\tleaq\t.Lmtc_q2(%rip), %rcx\n\tpushq\t%rcx\n"
                + "\tjmp\t__memtrace_slow_load8@PLT\n\t.subsection\t0\n");
        assertThat(text.split("__memtrace_check_inline", -1)).as("two runs, two counts").hasSize(3);
        assertThat(text).doesNotContain("__asan_");
    }

    /**
     * Two structs of ASan's frame (based at %rbx, so not kept apart as %rsp slots are), the second's scope
     * starting between their stores: gcc's shadow write (the -O0 form through a register, the -O2 form as a
     * displacement) ends the block, so no group check before it covers the second struct, still poisoned there.
     */
    @Test
    void aScopeStartingEndsTheBlockOfAGroupCheck() {
        String asm = """
                main:
                \tleaq\t-64(%rbx), %rax
                \tshrq\t$3, %rax
                \taddq\t$2147450880, %rax
                \tmovw\t$0, (%rax)
                \tleaq\t-64(%rbx), %rdi
                \tcall\t__asan_store8@PLT
                \tmovq\t%rdx, -64(%rbx)
                \tleaq\t-56(%rbx), %rdi
                \tcall\t__asan_store8@PLT
                \tmovq\t$0, -56(%rbx)
                \tleaq\t-32(%rbx), %rax
                \tshrq\t$3, %rax
                \tmovw\t$0, 2147450880(%rax)
                \tleaq\t-32(%rbx), %rdi
                \tcall\t__asan_store8@PLT
                \tmovq\t%rdx, -32(%rbx)
                \tleaq\t-24(%rbx), %rdi
                \tcall\t__asan_store8@PLT
                \tmovq\t$0, -24(%rbx)
                \tret
                """;
        CheckRewriter.Result r = CheckRewriter.rewrite(lines(asm), true);
        assertThat(r.checks()).isEqualTo(4);
        assertThat(r.ranges()).as("one group per struct").isEqualTo(2);
        assertThat(r.merged()).isEqualTo(2);
        String text = String.join("\n", r.lines());
        assertThat(text).contains(".Lmtc_g0:\n\t.long\t2, 16\n").contains(".Lmtc_g1:\n\t.long\t2, 16\n");
        assertThat(text.indexOf("call\t__memtrace_slow_group@PLT\n.Lmtc_gd1:"))
                .as("the second struct's group check after its scope starts")
                .isGreaterThan(text.indexOf("movw\t$0, 2147450880(%rax)"));
    }

    /**
     * A run of inlined checks ends at a label, a jump, any other call or a section change, not at a .loc or a
     * label of the debug info.
     */
    @Test
    void aRunOfChecksEndsWhereControlMayLeaveOrEnter() {
        String asm = """
                \tcall\t__asan_load4@PLT
                .LVL12:
                \t.loc 1 5 3
                \tcall\t__asan_store2@PLT
                \tcall\t__asan_load16@PLT
                \tcall\t__asan_load1@PLT
                .L3:
                \tcall\t__asan_load1@PLT
                \tjne\t.L3
                \tcall\t__asan_load8@PLT
                \tcall\tfree@PLT
                \tcall\t__asan_load8@PLT
                \t.section\t.text.unlikely
                \tcall\t__asan_load8@PLT
                \tcall\t__asan_load1_noabort@PLT
                \tcall\t__asan_loadN@PLT
                \tcall\t__asan_load2@PLT
                """;
        // the 16-byte, noabort and N-byte checks stay calls (counting themselves): they end a run like any call
        assertThat(InlineChecks.runs(lines(asm).stream().map(AsmLine::parse).toList()))
                .containsExactly(2, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1);
    }

    @Test
    void withoutPruningEveryCheckStaysAndEveryCallIsNamed() {
        CheckRewriter.Result r = CheckRewriter.rewrite(lines(FIELDS + "\t.type\tsum, @function\n"), false);
        assertThat(r.hoisted() + r.merged()).isZero();
        assertThat(String.join("\n", r.lines())).contains("\t.long\t1, 0, 6, 6, 0, 0, 0, 0");
        CheckRewriter.Result named = CheckRewriter.rewrite(lines("\t.file 1 \"x.c\"\n\t.type\tf, @function\nf:\n\t.loc 1 39 5\n"
                + "\tcall\tmalloc@PLT\n\tret\n\t.size\tf, .-f\n"), false);
        String text = String.join("\n", named.lines());
        assertThat(named.sites()).isEqualTo(1);
        assertThat(text).contains("f:\n.Lmtc_f0:").contains("call\tmalloc@PLT\n.Lmtc_r1:").contains(".Lmtc_e0:\n\t.size\tf, .-f")
                .contains("\t.quad\t.Lmtc_r1, .Lmtc_f0, .Lmtc_e0, .Lmtc_s0, .Lmtc_s1")
                .contains(".Lmtc_s0:\n\t.string\t\"f\"").contains(".Lmtc_s1:\n\t.string\t\"x.c:39\"");
        // an out-of-line slow path returns to the line after its check: that return point is the call site, named
        // with the check's line
        CheckRewriter.Result checked = CheckRewriter.rewrite(lines("\t.file 1 \"x.c\"\n\t.type\tf, @function\nf:\n\t.loc 1 7 5\n"
                + "\tmovq\t%rbx, %rdi\n\tcall\t__asan_load4@PLT\n\tmovl\t(%rbx), %eax\n\tret\n\t.size\tf, .-f\n"), false);
        assertThat(checked.sites()).isEqualTo(1);
        assertThat(String.join("\n", checked.lines())).contains("\tjne\t.Lmtc_o0\n.Lmtc_q0:\n")
                .contains("\tleaq\t.Lmtc_q0(%rip), %rcx\n\tpushq\t%rcx\n\tjmp\t__memtrace_slow_load4@PLT\n\t.subsection\t0\n")
                .contains("\t.quad\t.Lmtc_q0, .Lmtc_f0, .Lmtc_e0, .Lmtc_s0, .Lmtc_s1").contains(".Lmtc_s1:\n\t.string\t\"x.c:7\"");
    }

    @Test
    void aCallInAComdatGroupIsNamedByATableOfThatGroup() {
        String put = "_Z3putIiEvPT_i", group = ",\"axG\",@progbits," + put + ",comdat";
        CheckRewriter.Result r = CheckRewriter.rewrite(lines("\t.file 1 \"h.cc\"\n\t.text\n\t.type\tmain, @function\nmain:\n\t.loc 1 4 5\n"
                + "\tcall\tmalloc@PLT\n\tret\n\t.size\tmain, .-main\n"
                + "\t.section\t.text." + put + group + "\n\t.weak\t" + put + "\n\t.type\t" + put + ", @function\n" + put + ":\n"
                + "\t.loc 1 3 47\n\tcall\tfree@PLT\n"
                // its cold part, in the same group; a section pushed and popped in between changes nothing
                + "\t.section\t.text.unlikely." + put + group + "\n\t.pushsection\t.rodata\n\t.popsection\n\t.loc 1 3 50\n"
                + "\tcall\tabort@PLT\n\t.section\t.text." + put + group + "\n\tret\n\t.size\t" + put + ", .-" + put + "\n"
                // code in another section before a new function: its call would point into the group from outside
                + "\t.text\n\tcall\tputs@PLT\n"), false);
        String text = String.join("\n", r.lines());
        assertThat(r.sites()).isEqualTo(3);
        assertThat(text).contains(".Lmtc_table:\n\t.long\t1, 1, 0, 0, 0, 0, 0, 0\n\t.quad\t.Lmtc_r1, .Lmtc_f0, .Lmtc_e0, .Lmtc_s0, .Lmtc_s1\n")
                .contains("\t.section\t.data.rel.ro.local.mtc." + put + ",\"awG\",@progbits," + put + ",comdat\n\t.align 8\n.Lmtc_gt0:\n"
                        + "\t.long\t1, 2, 0, 0, 0, 0, 0, 0\n\t.quad\t.Lmtc_r3, .Lmtc_f2, .Lmtc_e2, .Lmtc_s2, .Lmtc_s3\n"
                        + "\t.quad\t.Lmtc_r4, .Lmtc_f2, .Lmtc_e2, .Lmtc_s2, .Lmtc_s3\n")
                .contains("\t.section\t.text.mtc." + put + ",\"axG\",@progbits," + put + ",comdat\n.Lmtc_gc0:\n"
                        + "\tleaq\t.Lmtc_gt0(%rip), %rdi\n\tjmp\t__memtrace_check_sites@PLT\n"
                        + "\t.section\t.init_array,\"awG\",@init_array," + put + ",comdat\n\t.align 8\n\t.quad\t.Lmtc_gc0\n")
                .contains(".Lmtc_s3:\n\t.string\t\"h.cc:3\"").contains("\tcall\tputs@PLT\n\t.section\t.data.rel.ro.local,");
        assertThat(CheckSites.Groups.groupOf(".rodata._ZTS1A,\"aMSG\",@progbits,1,_ZTS1A,comdat")).isEqualTo("_ZTS1A");
        assertThat(CheckSites.Groups.groupOf(".text.startup,\"ax\",@progbits")).isEmpty();
    }

    @Test
    void aFunctionsColdPartEndsInItsOwnSection() {
        String asm = String.join("\n", "\t.text", "\t.type\tf, @function", "f:", "\tcall\tg@PLT", "\tret",
                "\t.section\t.text.unlikely", "\t.type\tf.cold, @function", "f.cold:", "\tcall\tabort@PLT",
                "\t.text", "\t.size\tf, .-f", "\t.section\t.text.unlikely", "\t.size\tf.cold, .-f.cold", "\t.text",
                "\t.type\th, @function", "h:", "\tcall\tg@PLT", "");
        String text = String.join("\n", CheckRewriter.rewrite(lines(asm), true).lines());
        assertThat(text).contains("\t.text\n.Lmtc_e0:\n\t.size\tf, .-f")
                .contains("\t.section\t.text.unlikely\n.Lmtc_e2:\n\t.size\tf.cold, .-f.cold")
                .contains("\t.set\t.Lmtc_e4, .Lmtc_f4")
                .contains("\t.quad\t.Lmtc_r3, .Lmtc_f2, .Lmtc_e2, ");
    }
}
