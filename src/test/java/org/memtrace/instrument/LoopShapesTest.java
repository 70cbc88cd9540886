package org.memtrace.instrument;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.instrument.LoopSkeleton.Reason;
import org.memtrace.x86.Instruction;

/** The candidate loops gcc's layouts give, and why a candidate's shape is no loop the replay can follow. */
class LoopShapesTest {
    @TempDir
    Path dir;

    private static Map<Instruction, Integer> at(HandAssembly h) {
        Map<Instruction, Integer> at = new HashMap<>();
        for (int i = 0; i < h.code().size(); i++) at.put(h.code().get(i).instruction(), i);
        return at;
    }

    private static List<Integer> indices(Candidate c) {
        return c.order().stream().map(FunctionPlanner.Decoded::index).toList();
    }

    @Test
    void aLoopEnteredByFallingInRunsFromItsLabelToItsJumpBack() throws Exception {
        HandAssembly h = HandAssembly.of(dir, HandLoops.SIMPLE);
        Candidate c = LoopShapes.enteredAtTest(h.code(), h.at("movl (%rdi"), h.at("jne"));
        assertThat(indices(c)).containsExactly(1, 2, 3, 4, 5);
        assertThat(c.entryJump()).isEqualTo(-1);
        assertThat(c.exit()).isEqualTo(4);
        assertThat(c.exitTaken()).isFalse();
        assertThat(c.mayBeEmpty()).isFalse();
        assertThat(c.declined()).isNull();
        assertThat(LoopShapes.shape(h.code(), c, at(h))).isNull();
    }

    @Test
    void aJumpToTheTestAtTheBottomEntersTheLoopThere() throws Exception {
        HandAssembly h = HandAssembly.of(dir, HandLoops.ENTERED_AT_TEST);
        Candidate c = LoopShapes.enteredAtTest(h.code(), h.at("movq $0"), h.at("jb"));
        assertThat(indices(c)).containsExactly(2, 3, 4, 5);
        assertThat(c.entryJump()).as("the jmp before the body").isEqualTo(1);
        assertThat(c.entryInstruction()).isEqualTo(1);
        assertThat(c.mayBeEmpty()).as("a run may end at its first test").isTrue();
        assertThat(c.entryAt()).isEqualTo(-1);
        assertThat(LoopShapes.shape(h.code(), c, at(h))).isNull();
    }

    @Test
    void aLoopTestedAtTheTopLeavesByItsTestWhenTaken() throws Exception {
        HandAssembly h = HandAssembly.of(dir, HandLoops.TESTED_AT_TOP);
        Candidate c = LoopShapes.testedAtTop(h.code(), h.at("cmpq"), h.at("jmp"));
        assertThat(indices(c)).containsExactly(1, 2, 3, 4, 5);
        assertThat(c.exit()).as("the jge").isEqualTo(1);
        assertThat(c.end().index()).isEqualTo(h.at("jge"));
        assertThat(c.exitTaken()).isTrue();
        assertThat(c.mayBeEmpty()).isTrue();
        assertThat(LoopShapes.shape(h.code(), c, at(h))).isNull();
        assertThat(LoopShapes.testedAtTop(h.code(), h.at("movq $0"), h.at("jmp"))).as("no test at that top").isNull();
    }

    @Test
    void aReturnInTheBodyIsTakenOutAsASideExit() throws Exception {
        HandAssembly h = HandAssembly.of(dir, HandLoops.RETURN_IN_BODY);
        Candidate c = LoopShapes.enteredAtTest(h.code(), h.at("movq (%rdi"), h.at("jne .L3"));
        assertThat(LoopShapes.shape(h.code(), c, at(h))).isEqualTo(Reason.EXIT_IN_BODY);
        Candidate r = LoopShapes.reshaped(h.code(), c);
        assertThat(indices(r)).as("the ret's block left out").containsExactly(1, 2, 3, 5, 6, 7);
        assertThat(LoopShapes.shape(h.code(), r, at(h))).isNull();
    }

    @Test
    void anInnerLoopMakesTheOuterOneAnOuterLoop() throws Exception {
        HandAssembly h = HandAssembly.of(dir, HandLoops.NEST);
        Candidate outer = LoopShapes.enteredAtTest(h.code(), h.at("xorl %eax"), h.at("jne .L3"));
        assertThat(LoopShapes.shape(h.code(), outer, at(h))).isEqualTo(Reason.INNER_LOOP);
        Candidate inner = LoopShapes.enteredAtTest(h.code(), h.at("movq $0"), h.at("jne .L2"));
        assertThat(LoopShapes.shape(h.code(), inner, at(h))).isNull();
    }

    @Test
    void onlyCodeThatComparesRegistersIsATestTheEntryMayStartWith() throws Exception {
        HandAssembly h = HandAssembly.of(dir, HandLoops.ENTERED_AT_TEST);
        assertThat(LoopShapes.onlyCompares(h.code().subList(h.at("cmpq"), h.at("jb")))).isTrue();
        assertThat(LoopShapes.onlyCompares(h.code().subList(h.at("addq"), h.at("jb")))).as("addq writes %rax").isFalse();
        assertThat(LoopShapes.straight(h.code().subList(h.at("movq $0"), h.at("jb")))).isTrue();
        assertThat(LoopShapes.straight(h.code().subList(0, 2))).as("a jmp").isFalse();
    }
}
