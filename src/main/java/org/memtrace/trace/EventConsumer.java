package org.memtrace.trace;

import org.memtrace.event.EventSink;

/**
 * What follows a run: the interpretation stage ({@code analysis.Interpretation}), which feeds the writers
 * and analyses, or a test's collector. The tracer hands every event to {@link #accept} (or, for a fault,
 * {@link #fault}) in stream order from one thread, then calls {@link #finish} once, so a consumer never deals
 * with the target process or the ring.
 */
public interface EventConsumer extends EventSink {
    /** The stream has ended (the program exited, crashed or memtrace was interrupted). */
    default void finish() {}
}
