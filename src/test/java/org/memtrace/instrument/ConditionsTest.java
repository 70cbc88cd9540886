package org.memtrace.instrument;

import static org.assertj.core.api.Assertions.assertThat;
import static org.memtrace.x86.Register.named;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.format.SkeletonFormat;
import org.memtrace.format.SkeletonFormat.Condition;
import org.memtrace.instrument.Induction.Update;
import org.memtrace.x86.Register;

/**
 * A conditional block's computed condition: the compare and jump that decide it, and-ed with those of the
 * blocks around it; null (the block keeps its marker) for anything the replay cannot compute.
 */
class ConditionsTest {
    @TempDir
    Path dir;

    private static final int NONE = SkeletonFormat.NONE;
    private static final int JE = 4, JL = 12, JGE = 13, JG = 15;

    /** One loop of hand-written assembly, from its first body instruction to its {@code jne} back. */
    private record Body(List<FunctionPlanner.Decoded> order, boolean[] always, Map<Register, List<Integer>> writers) {
        /** The body position of the first instruction whose text starts with {@code start}. */
        int at(String start) {
            for (int p = 0; p < order.size(); p++)
                if (order.get(p).text().text().strip().replaceFirst("\\s+", " ").startsWith(start)) return p;
            throw new IllegalArgumentException("no instruction " + start);
        }
    }

    private Body body(String asm) throws Exception {
        HandAssembly h = HandAssembly.of(dir, asm);
        Candidate c = LoopShapes.enteredAtTest(h.code(), h.at("movl (%rdi"), h.at("jne"));
        Map<Register, List<Integer>> writers = new LinkedHashMap<>(); // as LoopAnalysis gathers them
        for (int p = 0; p < c.order().size(); p++)
            for (Register r : c.order().get(p).instruction().registersWritten()) writers.computeIfAbsent(r, k -> new ArrayList<>()).add(p);
        return new Body(c.order(), Dominance.always(c, h.model()), writers);
    }

    /** %rax stepped by 1 at body position {@code at}. */
    private static Map<Register, Update> counter(int at) {
        return Map.of(named("rax"), new Update(at, 1, null));
    }

    @Test
    void aBlockUnderACompareOfTheCounterWithAnImmediateRunsWhenTheJumpIsNotTaken() throws Exception {
        Body b = body(HandLoops.IF_COUNTER);
        var slots = new ArrayList<>(List.of(named("rdi")));
        Condition c = Conditions.condition(b.order(), b.always(), b.at("movl $0"), b.writers(), counter(b.at("addq")), slots);
        // cmpq $3, %rax; jg .L2: the block runs when %rax - 3 is not greater; %rax gets the next slot
        assertThat(c).isEqualTo(new Condition(Condition.CMP, 8, JG, false, 1, NONE, 0, 3, 0));
        assertThat(slots).containsExactly(named("rdi"), named("rax"));
    }

    @Test
    void theCounterUpdatedBeforeTheCompareSetsThePhaseAndALowerHalfTheWidth() throws Exception {
        Body b = body("""
                \txorl\t%eax, %eax
                .L3:
                \tmovl\t(%rdi,%rax,4), %edx
                \taddq\t$1, %rax
                \tcmpl\t$3, %eax
                \tjg\t.L2
                \tmovl\t$0, (%rsi,%rax,4)
                .L2:
                \tcmpq\t%rcx, %rax
                \tjne\t.L3
                \tret
                """);
        var slots = new ArrayList<Register>();
        Condition c = Conditions.condition(b.order(), b.always(), b.at("movl $0"), b.writers(), counter(b.at("addq")), slots);
        assertThat(c).isEqualTo(new Condition(Condition.CMP, 4, JG, false, 0, NONE, 0, 3, 1));
        assertThat(slots).containsExactly(named("rax"));
    }

    @Test
    void aBlockUnderTwoIfsGetsBothTermsAndedTheOuterOneFirst() throws Exception {
        // if (i != 0 && i < n) at -O1: the second test's block is itself conditional
        Body b = body("""
                \txorl\t%eax, %eax
                .L3:
                \tmovl\t(%rdi,%rax,4), %edx
                \tmovl\t%edx, (%rsi,%rax,4)
                \ttestq\t%rax, %rax
                \tje\t.L2
                \tcmpq\t%r8, %rax
                \tjge\t.L2
                \tmovl\t$0, 4(%rsi,%rax,4)
                .L2:
                \taddq\t$1, %rax
                \tcmpq\t%rcx, %rax
                \tjne\t.L3
                \tret
                """);
        var slots = new ArrayList<Register>();
        Condition c = Conditions.condition(b.order(), b.always(), b.at("movl $0"), b.writers(), counter(b.at("addq")), slots);
        var nonZero = new Condition(Condition.TEST, 8, JE, false, 0, 0, 0, 0, 0);
        assertThat(c).isEqualTo(new Condition(Condition.CMP, 8, JGE, false, 0, 1, 0, 0, 0, nonZero));
        assertThat(slots).as("the outer term's registers first, then the invariant bound").containsExactly(named("rax"), named("r8"));
        assertThat(c.holds(5, 9) && nonZero.holds(5, 5)).isTrue();
        assertThat(c.holds(9, 9)).isFalse();
    }

    @Test
    void upToFourJumpsAreAndedAndAFifthKeepsTheMarker() throws Exception {
        for (int ifs = 4; ifs <= 5; ifs++) {
            var asm = new StringBuilder("\txorl\t%eax, %eax\n.L3:\n\tmovl\t(%rdi,%rax,4), %edx\n");
            for (int k = 1; k <= ifs; k++) asm.append("\tcmpq\t$").append(k).append(", %rax\n\tjl\t.L2\n");
            asm.append("\tmovl\t$0, (%rsi,%rax,4)\n.L2:\n\taddq\t$1, %rax\n\tcmpq\t%rcx, %rax\n\tjne\t.L3\n\tret\n");
            Body b = body(asm.toString());
            var slots = new ArrayList<Register>();
            Condition c = Conditions.condition(b.order(), b.always(), b.at("movl $0"), b.writers(), counter(b.at("addq")), slots);
            if (ifs == 5) {
                assertThat(c).as("five nested ifs").isNull();
                assertThat(slots).as("slots are added only for a computable condition").isEmpty();
                continue;
            }
            Condition expected = null;
            for (int k = 1; k <= ifs; k++) expected = new Condition(Condition.CMP, 8, JL, false, 0, NONE, 0, k, 0, expected);
            assertThat(c).isEqualTo(expected);
        }
    }

    @Test
    void aBlockTheLoadedDataDecidesKeepsItsMarker() throws Exception {
        Body b = body(HandLoops.IF_LOADED);
        var slots = new ArrayList<>(List.of(named("rdi")));
        assertThat(Conditions.condition(b.order(), b.always(), b.at("movl $0"), b.writers(), counter(b.at("addq")), slots))
                .as("testl %edx, %edx: %edx is written by the load").isNull();
        assertThat(slots).containsExactly(named("rdi"));
    }

    @Test
    void whatTheReplayCannotEvaluateKeepsTheMarker() throws Exception {
        String template = """
                \txorl\t%eax, %eax
                .L3:
                \tmovl\t(%rdi,%rax,4), %edx
                \tCOMPARE
                \tJUMP\t.L2
                \tmovl\t$0, (%rsi,%rax,4)
                .L2:
                \taddq\t$1, %rax
                \tcmpq\t%rcx, %rax
                \tjne\t.L3
                \tret
                """;
        Map<String, String[]> cases = new LinkedHashMap<>();
        cases.put("a parity jump", new String[] {"cmpq\t$3, %rax", "jp"});
        cases.put("a compare with memory", new String[] {"cmpq\t$3, 8(%rdi)", "jg"});
        cases.put("a relocated immediate", new String[] {"cmpq\t$sym, %rax", "jg"});
        cases.put("a flag writer other than cmp and test", new String[] {"subq\t$3, %rdx", "jg"});
        cases.put("a register the body writes but does not step", new String[] {"cmpq\t%rdx, %rax", "jg"});
        for (var e : cases.entrySet()) {
            Body b = body(template.replace("COMPARE", e.getValue()[0]).replace("JUMP", e.getValue()[1]));
            var slots = new ArrayList<Register>();
            assertThat(Conditions.condition(b.order(), b.always(), b.at("movl $0"), b.writers(), counter(b.at("addq")), slots))
                    .as(e.getKey()).isNull();
            assertThat(slots).as(e.getKey()).isEmpty();
        }
    }

    @Test
    void aBlockWithASecondWayInOrAfterASideExitOrFlagsFromAnotherBlockKeepsTheMarker() throws Exception {
        Body twoWays = body("""
                \txorl\t%eax, %eax
                .L3:
                \tmovl\t(%rdi,%rax,4), %edx
                \tcmpq\t$3, %rax
                \tjg\t.L2
                \tcmpq\t$9, %rax
                \tje\t.L5
                \tmovl\t%edx, (%rsi,%rax,4)
                .L5:
                \tmovl\t$0, 4(%rsi,%rax,4)
                .L2:
                \taddq\t$1, %rax
                \tcmpq\t%rcx, %rax
                \tjne\t.L3
                \tret
                """);
        assertThat(Conditions.condition(twoWays.order(), twoWays.always(), twoWays.at("movl $0"), twoWays.writers(),
                counter(twoWays.at("addq")), new ArrayList<>())).as("fallen into and jumped to").isNull();

        Body sideExit = body("""
                \txorl\t%eax, %eax
                .L3:
                \tmovl\t(%rdi,%rax,4), %edx
                \tcmpq\t$3, %rax
                \tjg\t.L9
                \tmovl\t$0, (%rsi,%rax,4)
                \taddq\t$1, %rax
                \tcmpq\t%rcx, %rax
                \tjne\t.L3
                .L9:
                \tret
                """);
        assertThat(Conditions.condition(sideExit.order(), sideExit.always(), sideExit.at("movl $0"), sideExit.writers(),
                counter(sideExit.at("addq")), new ArrayList<>())).as("the jump's other edge leaves the loop").isNull();

        Body otherBlock = body("""
                \txorl\t%eax, %eax
                .L3:
                \tmovl\t(%rdi,%rax,4), %edx
                \tcmpq\t$3, %rax
                \tjl\t.L4
                \tmovl\t%edx, (%rsi,%rax,4)
                .L4:
                \tjg\t.L2
                \tmovl\t$0, 4(%rsi,%rax,4)
                .L2:
                \taddq\t$1, %rax
                \tcmpq\t%rcx, %rax
                \tjne\t.L3
                \tret
                """);
        assertThat(Conditions.condition(otherBlock.order(), otherBlock.always(), otherBlock.at("movl $0"), otherBlock.writers(),
                counter(otherBlock.at("addq")), new ArrayList<>())).as("jg's flags come from the block before").isNull();
    }
}
