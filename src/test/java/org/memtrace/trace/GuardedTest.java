package org.memtrace.trace;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.memtrace.event.Event;

/** The one consumer of a recording: every way in passes through, and a failure ends the delivery once. */
class GuardedTest {
    private static final Event.ProbeSite LOAD = new Event.ProbeSite(0x401000, Event.ProbeKind.LOAD, 8, 0, 0, 1, 1, 0, 0, 0,
            Event.SelectionTotals.NONE);

    /** Writes down each call; throws on the probe at {@code failAt} (-1: never). */
    private static final class Calls implements EventConsumer {
        final List<String> calls = new ArrayList<>();
        final long failAt;

        Calls(long failAt) { this.failAt = failAt; }

        @Override public void accept(Event e) { calls.add(e.getClass().getSimpleName()); }

        @Override public void fault(int tid, long ip, long address, boolean write, boolean sameStep) { calls.add("fault " + address); }

        @Override public void probe(int tid, long address, Event.ProbeSite site) {
            if (address == failAt) throw new IllegalStateException("boom");
            calls.add("probe " + address);
        }

        @Override public void finish() { calls.add("finish"); }
    }

    @Test
    void passesEveryKindOfCallOnByItsFields() {
        Calls c = new Calls(-1);
        List<String> problems = new ArrayList<>();
        Guarded g = new Guarded(c, problems::add, "the trace stops here");
        g.accept(new Event.Stats(1, 0, 0, 0, 0, 0));
        g.fault(1, 0x401000, 0x500000, false, false);
        g.probe(1, 0x500008, LOAD);
        g.finish();
        assertThat(c.calls).containsExactly("Stats", "fault " + 0x500000, "probe " + 0x500008, "finish");
        assertThat(problems).isEmpty();
    }

    @Test
    void aFailureIsSaidOnceAndNothingAfterItIsDeliveredButFinish() {
        Calls c = new Calls(2);
        List<String> problems = new ArrayList<>();
        Guarded g = new Guarded(c, problems::add, "the trace stops here");
        g.probe(1, 1, LOAD);
        g.probe(1, 2, LOAD);
        g.probe(1, 3, LOAD);
        g.fault(1, 0x401000, 4, true, false);
        g.finish();
        assertThat(c.calls).containsExactly("probe 1", "finish");
        assertThat(problems).singleElement().asString().contains("internal error in Calls", "boom", "the trace stops here");
    }
}
