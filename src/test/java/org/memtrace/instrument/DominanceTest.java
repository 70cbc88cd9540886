package org.memtrace.instrument;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which body positions run every iteration: those of the blocks that dominate the latch. */
class DominanceTest {
    @TempDir
    Path dir;

    @Test
    void theBlockUnderAnIfIsTheOnlyOneThatMayNotRun() throws Exception {
        HandAssembly h = HandAssembly.of(dir, HandLoops.IF_LOADED);
        Candidate c = LoopShapes.enteredAtTest(h.code(), h.at("movl (%rdi"), h.at("jne"));
        // movl, testl, je | movl $0 | addq, cmpq, jne
        assertThat(Dominance.always(c, h.model())).containsExactly(true, true, true, false, true, true, true);
    }

    @Test
    void everyPositionOfAStraightBodyRunsEveryIteration() throws Exception {
        HandAssembly h = HandAssembly.of(dir, HandLoops.SIMPLE);
        Candidate c = LoopShapes.enteredAtTest(h.code(), h.at("movl (%rdi"), h.at("jne"));
        assertThat(Dominance.always(c, h.model())).containsExactly(true, true, true, true, true);
    }
}
