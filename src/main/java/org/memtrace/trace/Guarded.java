package org.memtrace.trace;

import java.util.function.Consumer;
import org.memtrace.event.Event;

/**
 * The one consumer of a recording, guarded: a consumer that fails gets no further events (a trace with a
 * hole in the middle would pass for whole), and the failure is reported once through {@code problems}; the
 * recording itself goes on. The interpretation stage already keeps one failing analysis from the others:
 * this guards against a failure in the stage itself.
 */
public final class Guarded implements EventConsumer {
    private final EventConsumer consumer;
    private final Consumer<String> problems;
    private final String afterFailure;
    private boolean delivering = true;

    /** {@code afterFailure} ends the failure's sentence: what happens to the run, e.g. "the trace stops here". */
    public Guarded(EventConsumer consumer, Consumer<String> problems, String afterFailure) {
        this.consumer = consumer;
        this.problems = problems;
        this.afterFailure = afterFailure;
    }

    @Override
    public void accept(Event event) {
        if (!delivering) return;
        try {
            consumer.accept(event);
        } catch (RuntimeException e) {
            failed(e);
        }
    }

    /** A fault by its fields (the live path makes no event object per fault). */
    @Override
    public void fault(int tid, long ip, long address, boolean write, boolean sameStep) {
        if (!delivering) return;
        try {
            consumer.fault(tid, ip, address, write, sameStep);
        } catch (RuntimeException e) {
            failed(e);
        }
    }

    /** A probe record by its fields (a {@code .mtr} file's reader makes no event object per access). */
    @Override
    public void probe(int tid, long address, Event.ProbeSite site) {
        if (!delivering) return;
        try {
            consumer.probe(tid, address, site);
        } catch (RuntimeException e) {
            failed(e);
        }
    }

    @Override
    public void finish() {
        try {
            consumer.finish();
        } catch (RuntimeException e) {
            problems.accept("finishing " + consumer.getClass().getSimpleName() + " failed: " + e);
        }
    }

    private void failed(RuntimeException e) {
        delivering = false;
        problems.accept("internal error in " + consumer.getClass().getSimpleName() + " (" + e + "); " + afterFailure);
    }
}
