package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The in-bounds rule on gcc -O2 shapes of global accesses (copied from `gcc -fsanitize=address` runs). */
class InBoundsTest {
    private static final String TABLE = """
            \t.type\ttable, @object
            \t.size\ttable, 16777216
            table:
            \t.zero\t16777248
            """;

    /** hash.c's put(): table[h & (SLOTS - 1)] with 16-byte slots, the mask re-applied after a back edge. */
    private static final String MASKED = """
            main:
            \tleaq\ttable(%rip), %rbx
            .L5:
            \tandl\t$1048575, %ebp
            \tmovq\t%rbp, %rax
            \tsalq\t$4, %rax
            \tleaq\t(%rbx,%rax), %r15
            \tmovq\t%r15, %rdi
            \tcall\t__asan_load8@PLT
            \tmovq\t(%r15), %rax
            \tjmp\t.L32
            .L34:
            \taddq\t$1, %rbp
            \tandl\t$1048575, %ebp
            \tmovq\t%rbp, %rax
            \tsalq\t$4, %rax
            \tleaq\t(%rbx,%rax), %r15
            \tmovq\t%r15, %rdi
            \tcall\t__asan_load8@PLT
            \tmovq\t(%r15), %rax
            .L32:
            \ttestq\t%rax, %rax
            \tjne\t.L34
            \tsalq\t$4, %rbp
            \taddq\t%rbx, %rbp
            \tleaq\t8(%rbp), %rdi
            \tcall\t__asan_store8@PLT
            \tmovq\t%r14, 8(%rbp)
            \tcall\tputs@PLT
            \taddq\t%r13, %rbp
            \tleaq\t8(%rbp), %rdi
            \tcall\t__asan_store8@PLT
            \tjmp\t.L5
            """;

    @Test
    void masksAndJoinsProveTheTablesAccesses() {
        CheckRewriter.Result r = CheckRewriter.rewrite((MASKED + TABLE).lines().toList(), true);
        assertThat(r.checks()).isEqualTo(4);
        assertThat(r.bounded()).isEqualTo(3);
        String text = String.join("\n", r.lines());
        // the store after .L32 is reached from both loads' blocks, with %rbp in [0, 2^20 - 1] on each, and
        // becomes table + [0, 16 * (2^20 - 1)]; after puts %rbp plus an unknown %r13 is anywhere: kept
        assertThat(text.split("proven in bounds", -1)).hasSize(4);
        // the kept check is inlined: its shadow test, and the runtime's slow path
        assertThat(text).containsOnlyOnce("\t__memtrace_slow_store8@PLT");
        assertThat(text.substring(text.indexOf("addq\t%r13, %rbp"))).contains("\t__memtrace_slow_store8@PLT");
        assertThat(text).contains("\t.long\t1, 0, 4, 1, 3, 0, 0, 0");   // 4 checks, 1 kept, 3 removed
    }

    private static Object[] proven(String code, String data) {
        CheckRewriter.Result r = CheckRewriter.rewrite((code + data).lines().toList(), true);
        return new Object[] {r.checks(), r.bounded()};
    }

    @Test
    void aMaskWiderThanTheArrayKeepsItsCheck() {
        String code = """
                get:
                \tandl\t$127, %edi
                \tleaq\tsmall(%rip), %rax
                \tleaq\t(%rax,%rdi,4), %rdi
                \tcall\t__asan_load4@PLT
                \tret
                """;
        String data = "\t.type\tsmall, @object\n\t.size\tsmall, 400\nsmall:\n\t.zero\t432\n";
        assertThat(proven(code, data)).containsExactly(1, 0);                               // 127 * 4 + 4 > 400
        assertThat(proven(code.replace("$127", "$99"), data)).containsExactly(1, 1);        // 99 * 4 + 4 = 400
        assertThat(proven(code.replace("$127", "$99"), "\t.weak\tsmall\n" + data)).containsExactly(1, 0);
    }

    @Test
    void anUnsignedCompareBoundsTheFallThrough() {
        // if (i < 100) return small[i]; with i unsigned long: cmpq $99, %rdi; ja .L2
        String code = """
                get:
                \tcmpq\t$99, %rdi
                \tja\t.L2
                \tleaq\tsmall(%rip), %rax
                \tleaq\t(%rax,%rdi,4), %rdi
                \tcall\t__asan_load4@PLT
                \tret
                .L2:
                \tleaq\tsmall(%rip), %rax
                \tleaq\t(%rax,%rdi,4), %rdi
                \tcall\t__asan_load4@PLT
                \tret
                """;
        String data = "\t.type\tsmall, @object\n\t.size\tsmall, 400\nsmall:\n\t.zero\t432\n";
        assertThat(proven(code, data)).containsExactly(2, 1);
        // a signed compare proves nothing of a value that may be negative
        assertThat(proven(code.replace("ja", "jg"), data)).containsExactly(2, 0);
        // unsigned char indexes: movzbl gives [0, 255]
        String lut = """
                get:
                \tmovzbl\t(%rsi), %eax
                \tleaq\tlut(%rip), %rdx
                \tleaq\t(%rdx,%rax,2), %rdi
                \tcall\t__asan_load2@PLT
                \tret
                """;
        assertThat(proven(lut, "\t.type\tlut, @object\n\t.size\tlut, 512\nlut:\n")).containsExactly(1, 1);
        assertThat(proven(lut, "\t.type\tlut, @object\n\t.size\tlut, 510\nlut:\n")).containsExactly(1, 0);
    }

    @Test
    void aLoopThatGrowsAnIndexIsWidenedNotProven() {
        String code = """
                walk:
                \txorl\t%eax, %eax
                .L3:
                \tleaq\tsmall(%rip), %rdx
                \tleaq\t(%rdx,%rax,4), %rdi
                \tcall\t__asan_store4@PLT
                \taddq\t$1, %rax
                \tjmp\t.L3
                """;
        // %rax is forgotten by the check's call anyway; keep it in %rbx to test the widening itself
        String kept = code.replace("%rax", "%rbx").replace("xorl\t%eax, %eax", "xorl\t%ebx, %ebx");
        String data = "\t.type\tsmall, @object\n\t.size\tsmall, 400\nsmall:\n\t.zero\t432\n";
        assertThat(proven(kept, data)).containsExactly(1, 0);
        // a jump table's target knows nothing
        String table = """
                f:
                \tandl\t$3, %ebx
                \tjmp\t*%rax
                .L7:
                \tleaq\tsmall(%rip), %rdx
                \tleaq\t(%rdx,%rbx,4), %rdi
                \tcall\t__asan_store4@PLT
                \tret
                \t.section\t.rodata
                \t.long\t.L7-.L6
                """;
        assertThat(proven(table, data)).containsExactly(1, 0);
        assertThat(proven(table.replace("\t.long\t.L7-.L6\n", "").replace("\tjmp\t*%rax\n", ""), data)).containsExactly(1, 1);
    }
}
