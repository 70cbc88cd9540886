package org.memtrace.trace;

import java.util.List;
import java.util.function.Consumer;
import org.memtrace.event.Event;

/**
 * Hands every event to each consumer in turn, and finishes them all. A consumer that fails stops the
 * delivery of further events to every consumer (a trace with a hole in the middle would pass for whole),
 * and the failure is reported once through {@code problems}; the recording itself goes on.
 */
public final class Fanout implements EventConsumer {
    private final List<EventConsumer> consumers;
    private final Consumer<String> problems;
    private final String afterFailure;
    private boolean delivering = true;

    /** {@code afterFailure} ends the failure's sentence: what happens to the run, e.g. "the trace stops here". */
    public Fanout(List<? extends EventConsumer> consumers, Consumer<String> problems, String afterFailure) {
        this.consumers = List.copyOf(consumers);
        this.problems = problems;
        this.afterFailure = afterFailure;
    }

    @Override
    public void accept(Event event) {
        if (!delivering) return;
        for (EventConsumer c : consumers) {
            try {
                c.accept(event);
            } catch (RuntimeException e) {
                delivering = false;
                problems.accept("internal error in " + c.getClass().getSimpleName() + " (" + e + "); " + afterFailure);
                return;
            }
        }
    }

    /** A fault by its fields, to each consumer in turn (the live path makes no event object per fault). */
    @Override
    public void fault(int tid, long ip, long address, boolean write, boolean sameStep) {
        if (!delivering) return;
        for (EventConsumer c : consumers) {
            try {
                c.fault(tid, ip, address, write, sameStep);
            } catch (RuntimeException e) {
                delivering = false;
                problems.accept("internal error in " + c.getClass().getSimpleName() + " (" + e + "); " + afterFailure);
                return;
            }
        }
    }

    @Override
    public void finish() {
        for (EventConsumer c : consumers) {
            try {
                c.finish();
            } catch (RuntimeException e) {
                problems.accept("finishing " + c.getClass().getSimpleName() + " failed: " + e);
            }
        }
    }
}
