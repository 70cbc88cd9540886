package org.memtrace.instrument;

import static org.assertj.core.api.Assertions.assertThat;
import static org.memtrace.x86.Register.named;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.instrument.LoopSkeleton.Loop;
import org.memtrace.instrument.LoopSkeleton.Reason;

/** A constant trip count, and whether the loop's own records cost more than the full build's probes. */
class TripCostTest {
    @TempDir
    Path dir;

    private record Analyzed(HandAssembly h, Candidate c, Loop loop) {}

    private Analyzed analyzed(String asm, String first, String last) throws Exception {
        HandAssembly h = HandAssembly.of(dir, asm);
        Candidate c = LoopShapes.enteredAtTest(h.code(), h.at(first), h.at(last));
        return new Analyzed(h, c, (Loop) LoopAnalysis.analyze(c, Dominance.always(c, h.model()), h.probes()));
    }

    @Test
    void threeIterationsOfOneStoreCostLessThanTheLoopsRecords() throws Exception {
        Analyzed a = analyzed(HandLoops.THREE, "movq $0", "jne");
        assertThat(TripCost.constantTrips(a.h().code(), a.c(), a.loop())).isEqualTo(3);
        // entry and exit: 2 frames of 9 + 4 per record (2 slots and the exit's) = 30; full: 9 + 4 × 3 = 21
        assertThat(TripCost.dearer(a.h().code(), a.c(), a.loop())).isTrue();
        assertThat(a.h().plan().declined()).extracting(LoopSkeleton.Declined::reason).containsExactly(Reason.FEW_ITERATIONS);
    }

    @Test
    void sixtyFourIterationsPayForTheLoop() throws Exception {
        Analyzed a = analyzed(HandLoops.NEST.replace("\taddq\t$512, %rdi\n", ""), "movq $0", "jne .L2");
        assertThat(TripCost.constantTrips(a.h().code(), a.c(), a.loop())).isEqualTo(64);
        assertThat(TripCost.dearer(a.h().code(), a.c(), a.loop())).isFalse();
    }

    @Test
    void aBoundInARegisterTheCodeDoesNotSetIsNoConstant() throws Exception {
        Analyzed a = analyzed(HandLoops.SIMPLE, "movl (%rdi", "jne");
        assertThat(TripCost.constantTrips(a.h().code(), a.c(), a.loop())).isZero();
        assertThat(TripCost.dearer(a.h().code(), a.c(), a.loop())).isFalse();
        assertThat(TripCost.constantAtEntry(a.h().code(), a.c().first(), named("rax"))).as("movl $0, %eax").isZero();
        assertThat(TripCost.constantAtEntry(a.h().code(), a.c().first(), named("rcx"))).isNull();
    }
}
