package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Where a single indexed access's base pointer is found, and where it is not (IndexBase). */
class IndexBaseTest {
    private static List<AsmLine> parse(String text) {
        return text.lines().map(AsmLine::parse).toList();
    }

    private static int call(List<AsmLine> lines) {
        for (int i = 0; i < lines.size(); i++) if (CheckCall.of(lines.get(i)) != null) return i;
        throw new AssertionError("no check call");
    }

    @Test
    void aScaledIndexWhosePointerRegisterWasReusedGivesThePointerBack() {
        // gcc -O2: poke(int *a, long k) { a[k] = -1; }: %rdi, the pointer, is overwritten by the address
        List<AsmLine> l = parse("\tleaq\t(%rdi,%rsi,4), %rbx\n.LVL3:\n\tmovq\t%rbx, %rdi\n\tcall\t__asan_store4@PLT\n\tmovl\t$-1, (%rbx)\n");
        IndexBase.Base b = IndexBase.of(l, call(l));
        assertThat(b.setup()).containsExactly("\tleaq\t0(,%rsi,4), %rsi", "\tnegq\t%rsi", "\taddq\t%rdi, %rsi");
        assertThat(b.either()).isFalse();
    }

    @Test
    void aScaleOfOneOrAnAdditionMayHaveEitherTermForPointer() {
        List<AsmLine> l = parse("\tleaq\t(%rax,%rdx), %rbx\n\tmovq\t%rbx, %rax\n\tmovq\t%rax, %rdi\n\tcall\t__asan_store1@PLT\n");
        assertThat(IndexBase.of(l, call(l))).isEqualTo(new IndexBase.Base(List.of("\tmovq\t%rdx, %rsi"), true));
        List<AsmLine> add = parse("\taddq\t%rdx, %rax\n\tmovq\t%rax, %rdi\n\tcall\t__asan_load8@PLT\n");
        assertThat(IndexBase.of(add, call(add))).isEqualTo(new IndexBase.Base(List.of("\tmovq\t%rdx, %rsi"), true));
    }

    @Test
    void constantOffsetsStackSlotsAndJumpTargetsGiveNoBase() {
        List<AsmLine> field = parse("\tleaq\t32(%rbx), %rdi\n\tcall\t__asan_load8@PLT\n");
        assertThat(IndexBase.of(field, call(field))).isNull();
        List<AsmLine> stack = parse("\tleaq\t(%rsp,%rax,4), %rdi\n\tcall\t__asan_load4@PLT\n");
        assertThat(IndexBase.of(stack, call(stack))).isNull();
        List<AsmLine> joined = parse("\tleaq\t(%rbx,%rax,4), %rdi\n.L4:\n\tcall\t__asan_load4@PLT\n");
        assertThat(IndexBase.of(joined, call(joined))).isNull();
    }

    @Test
    void linesBetweenALabelAndAJumpBackToItAreInALoop() {
        List<AsmLine> l = parse("\tnop\n.L2:\n\tcall\t__asan_load4@PLT\n\tjne\t.L2\n\tcall\t__asan_load4@PLT\n\tjmp\t.L9\n.L9:\n");
        boolean[] in = IndexBase.inLoops(l);
        assertThat(in).containsExactly(false, true, true, true, false, false, false);
    }
}
