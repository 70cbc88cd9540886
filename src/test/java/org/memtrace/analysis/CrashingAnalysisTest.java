package org.memtrace.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.memtrace.event.Event;
import org.memtrace.trace.InstructionShapes;
import org.memtrace.trace.Naming;

/** An analysis that throws is dropped and named in one sentence; the others see the whole trace and finish. */
class CrashingAnalysisTest {
    private static final Naming NAMING = new Naming() {
        @Override public void observe(Event event) {}
        @Override public String region(long address) { return "[heap]"; }
        @Override public String data(long address) { return "0x" + Long.toHexString(address); }
        @Override public String code(long ip) { return "main+" + (ip - 0x401000); }
        @Override public String block(Event.Alloc allocation) { return NO_BLOCK; }
    };

    /** Counts accesses; throws at access number {@code failAt} (never when negative), or in finish. */
    private static final class Counting implements Analysis {
        final String name;
        final int failAt;
        final boolean failFinish;
        final List<Long> seen = new ArrayList<>();
        boolean finished;

        Counting(String name, int failAt, boolean failFinish) {
            this.name = name;
            this.failAt = failAt;
            this.failFinish = failFinish;
        }

        @Override
        public void access(Access access) {
            if (seen.size() == failAt) throw new IllegalStateException("no room for access " + access.sequence());
            seen.add(access.address());
        }

        @Override
        public void finish(Ending ending) {
            if (failFinish) throw new ArithmeticException("/ by zero");
            finished = true;
        }

        @Override
        public String name() { return name; }
    }

    @Test
    void theOthersSeeEveryAccessAndWriteTheirResults() {
        Counting before = new Counting("first", -1, false), crashing = new Counting("cachesim", 3, false),
                after = new Counting("last", -1, false), finishing = new Counting("report", -1, true);
        Interpretation stage = new Interpretation(NAMING, InstructionShapes.UNKNOWN, List.of(before, crashing, after, finishing));
        for (int i = 0; i < 10; i++) stage.accept(new Event.Access(1, 0x401000, 0x5000 + 8 * i, false, false));
        List<String> problems = stage.finish(Ending.offline(10, stage.events(), 0, Map.of()));
        assertThat(problems).containsExactly("cachesim: no room for access 3", "report: / by zero");
        assertThat(before.seen).hasSize(10);
        assertThat(after.seen).hasSize(10);
        assertThat(crashing.seen).containsExactly(0x5000L, 0x5008L, 0x5010L);
        assertThat(before.finished).isTrue();
        assertThat(after.finished).isTrue();
        assertThat(crashing.finished).isFalse();
        assertThat(stage.complete()).isFalse();
    }
}
