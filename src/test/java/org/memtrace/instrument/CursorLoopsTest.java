package org.memtrace.instrument;

import static org.assertj.core.api.Assertions.assertThat;
import static org.memtrace.x86.Register.named;

import java.nio.file.Path;
import java.util.BitSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Loops that keep the thread's cursor in a register: only the simplest shape (a label entered by falling
 * into it, straight-line code, one conditional jump back), with two registers the body does not use.
 */
class CursorLoopsTest {
    @TempDir
    Path dir;

    private List<CursorLoops.Loop> find(String asm) throws Exception {
        return find(HandAssembly.of(dir, asm), new BitSet());
    }

    private static List<CursorLoops.Loop> find(HandAssembly h, BitSet unnumbered) {
        var groups = ProbeGroups.group(h.code(), h.probes(), h.barrier());
        return CursorLoops.find(h.code(), groups, unnumbered, h.labels(), h.references());
    }

    @Test
    void aStraightLoopTakesTheFirstScratchAndAddressRegistersItDoesNotUse() throws Exception {
        // %rdx is the loop's: the cursor is the next scratch register, the addresses the first free one after it
        assertThat(find(HandLoops.SIMPLE)).containsExactly(
                new CursorLoops.Loop(".L3", 5, Set.of(1), named("r11"), named("r10")));
    }

    @Test
    void registersTheBodyUsesAreSkippedInTheirListsOrder() throws Exception {
        assertThat(find("""
                \tmovl\t$0, %eax
                .L3:
                \tmovq\t(%rdi,%rax,8), %rdx
                \tmovq\t(%rsi,%rax,8), %r11
                \tleaq\t(%rdx,%r11), %r10
                \tmovq\t%r10, (%r8,%rax,8)
                \taddq\t$1, %rax
                \tcmpq\t%rcx, %rax
                \tjne\t.L3
                \tret
                """)).containsExactly(new CursorLoops.Loop(".L3", 7, Set.of(1), named("r9"), named("rbx")));
    }

    @Test
    void gccsDebugLabelsInsideTheBodyAreNoJumpTargetsButEndAGroup() throws Exception {
        assertThat(find("""
                \tmovl\t$0, %eax
                .L3:
                \tmovl\t(%rdi,%rax,4), %edx
                .LVL5:
                \taddl\t%edx, (%rsi,%rax,4)
                \taddq\t$1, %rax
                \tcmpq\t%rcx, %rax
                \tjne\t.L3
                \tret
                """)).containsExactly(new CursorLoops.Loop(".L3", 5, Set.of(1, 2), named("r11"), named("r10")));
    }

    @Test
    void aLoopOfAnotherShapeOrThatTouchesTheStackOrASegmentBaseKeepsItsCursorInMemory() throws Exception {
        assertThat(find(HandLoops.ENTERED_AT_TEST)).as("a jump target (.L2) inside the body").isEmpty();
        assertThat(find(HandLoops.TESTED_AT_TOP)).as("the jump back is unconditional").isEmpty();
        assertThat(find(HandLoops.CHASE)).as("a conditional jump out of the middle").isEmpty();
        assertThat(find("""
                \ttestq\t%rcx, %rcx
                \tje\t.L3
                \tmovl\t$0, %eax
                .L3:
                \tmovl\t(%rdi,%rax,4), %edx
                \taddl\t%edx, (%rsi,%rax,4)
                \taddq\t$1, %rax
                \tcmpq\t%rcx, %rax
                \tjne\t.L3
                \tret
                """)).as("the label is named by another jump too").isEmpty();
        assertThat(find("""
                \tmovl\t$0, %eax
                .L3:
                \tmovl\t(%rdi,%rax,4), %edx
                \tmovl\t%edx, -8(%rsp)
                \taddq\t$1, %rax
                \tcmpq\t%rcx, %rax
                \tjne\t.L3
                \tret
                """)).as("%rsp: the saves stay below it throughout").isEmpty();
        assertThat(find("""
                \tmovl\t$0, %eax
                .L3:
                \tmovl\t%fs:(%rdi,%rax,4), %edx
                \tmovl\t%edx, (%rsi,%rax,4)
                \taddq\t$1, %rax
                \tcmpq\t%rcx, %rax
                \tjne\t.L3
                \tret
                """)).as("a segment base").isEmpty();
        assertThat(find("""
                \tmovl\t$0, %eax
                .L3:
                \tmovl\t(%rdi,%rax,4), %edx
                \tcall\tg
                \taddq\t$1, %rax
                \tcmpq\t%rcx, %rax
                \tjne\t.L3
                \tret
                """)).as("a call").isEmpty();
    }

    @Test
    void aRepStringProbeOrUnnumberedCodeInsideKeepsTheCursorInMemory() throws Exception {
        assertThat(find("""
                \tmovl\t$0, %eax
                .L3:
                \tmovl\t$8, %ecx
                \trep movsb
                \taddq\t$1, %rax
                \tcmpq\t%rdx, %rax
                \tjne\t.L3
                \tret
                """)).as("rep movsb has a probe of its own, which loads the cursor").isEmpty();
        HandAssembly h = HandAssembly.of(dir, HandLoops.SIMPLE);
        BitSet inlineAssembly = new BitSet();
        inlineAssembly.set(h.at("addq"));
        assertThat(find(h, inlineAssembly)).as("inline assembly before addq").isEmpty();
        assertThat(find(h, new BitSet())).hasSize(1);
    }
}
