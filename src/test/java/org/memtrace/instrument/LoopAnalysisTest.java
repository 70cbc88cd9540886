package org.memtrace.instrument;

import static org.assertj.core.api.Assertions.assertThat;
import static org.memtrace.x86.Register.named;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.format.SkeletonFormat;
import org.memtrace.format.SkeletonFormat.Condition;
import org.memtrace.instrument.LoopSkeleton.Item;
import org.memtrace.instrument.LoopSkeleton.Loop;
import org.memtrace.instrument.LoopSkeleton.Marker;
import org.memtrace.instrument.LoopSkeleton.Outcome;
import org.memtrace.instrument.LoopSkeleton.Reason;

/** One loop analyzed: its slots and steps, computed and logged accesses, markers, and computed conditions. */
class LoopAnalysisTest {
    @TempDir
    Path dir;

    private static final int NONE = SkeletonFormat.NONE;

    private Outcome analyze(String asm, String first, String last) throws Exception {
        HandAssembly h = HandAssembly.of(dir, asm);
        Candidate c = LoopShapes.enteredAtTest(h.code(), h.at(first), h.at(last));
        return LoopAnalysis.analyze(c, Dominance.always(c, h.model()), h.probes());
    }

    private static List<String> items(Loop l) {
        return l.items().stream().map(i -> i.instruction() + (i.computed() ? " computed" : " logged") + " base " + i.baseSlot()
                + " index " + i.indexSlot() + " scale " + i.scale() + " disp " + i.displacement() + " cond " + i.cond()).toList();
    }

    @Test
    void bothAccessesOfAStraightLoopAreComputedFromThreeRegisters() throws Exception {
        Loop l = (Loop) analyze(HandLoops.SIMPLE, "movl (%rdi", "jne");
        assertThat(l.registers()).containsExactly(named("rdi"), named("rax"), named("rsi"));
        assertThat(l.steps()).containsExactly(0, 1, 0);
        assertThat(l.stepSlots()).containsExactly(NONE, NONE, NONE);
        assertThat(l.tripSlot()).isEqualTo(1);
        assertThat(l.header()).isEqualTo(".L3");
        assertThat(l.backEdge()).isEqualTo(5);
        assertThat(items(l)).containsExactly("1 computed base 0 index 1 scale 4 disp 0 cond 0",
                "2 computed base 2 index 1 scale 4 disp 0 cond 0");
        assertThat(l.markers()).isEmpty();
    }

    @Test
    void aBlockTheDataDecidesGetsAMarkerAndItsAccessIsComputed() throws Exception {
        Loop l = (Loop) analyze(HandLoops.IF_LOADED, "movl (%rdi", "jne");
        assertThat(items(l)).containsExactly("1 computed base 0 index 1 scale 4 disp 0 cond 0",
                "4 computed base 2 index 1 scale 4 disp 0 cond 1");
        assertThat(l.markers()).containsExactly(new Marker(4, 1, false, false, false, null));
    }

    @Test
    void aBlockTheCounterDecidesGetsAComputedConditionAndNoProbe() throws Exception {
        Loop l = (Loop) analyze(HandLoops.IF_COUNTER, "movl (%rdi", "jne");
        assertThat(items(l)).containsExactly("1 computed base 0 index 1 scale 4 disp 0 cond 0",
                "2 computed base 2 index 1 scale 4 disp 0 cond 0", "5 computed base 2 index 1 scale 4 disp 4 cond 1");
        // the block runs when jg (cc 15) on %rax − 3 is not taken
        var notAbove3 = new Condition(Condition.CMP, 8, 15, false, 1, NONE, 0, 3, 0);
        assertThat(l.markers()).containsExactly(new Marker(5, 2, false, false, false, notAbove3));
        assertThat(l.markers().getFirst().computed()).isTrue();
        assertThat(notAbove3.holds(3, 0)).isTrue();
        assertThat(notAbove3.holds(4, 0)).isFalse();
    }

    @Test
    void aLoopWhoseAddressesDependOnLoadsIsDeclinedWithItsReason() throws Exception {
        assertThat(analyze(HandLoops.CHASE, "movq (%rdi", "jne")).isEqualTo(Reason.MOSTLY_LOGGED);
    }

    @Test
    void theAccessesComputedAndLoggedEveryIterationAreCounted() {
        var computed = new Item(1, null, true, 0, NONE, 1, 0, 0, 0, false);
        var logged = new Item(2, null, false, NONE, NONE, 0, 0, 0, 0, false);
        var conditional = new Item(3, null, true, 0, NONE, 1, 0, 1, 0, false);
        assertThat(LoopAnalysis.computedEveryIteration(List.of(computed, logged, conditional, computed))).isEqualTo(2);
        assertThat(LoopAnalysis.loggedEveryIteration(List.of(computed, logged, conditional))).isEqualTo(1);
    }
}
