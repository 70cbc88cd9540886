package org.memtrace.analysis;

import java.io.IOException;
import org.memtrace.event.Event;
import org.memtrace.trace.TracedAccess;

/**
 * An analysis of the interpreted trace: the loads and stores as the trace prints them and the block
 * operations, each with the sequence number of its MadT line. Names come from the {@link
 * org.memtrace.trace.Naming} the analysis was built with, which {@link Interpretation} keeps current: when
 * a method runs, the naming describes the program at that event.
 */
public interface AccessAnalysis {

    void access(long sequence, TracedAccess access);

    void block(long sequence, Event.Block block);

    /**
     * Names may have changed since the last access (an allocation, a release, a new module or mapping):
     * an analysis that caches names drops them. Accesses and block operations never change names.
     */
    default void namesChanged() {}

    /**
     * An allocator call, numbered as its MadT line ({@code -1} for free(NULL), which prints none), with the
     * name {@link org.memtrace.trace.Naming#block} gives it: the block it created, or the released name of
     * the block it released. The naming has already seen it. By default only the names changed.
     */
    default void allocation(long sequence, Event.Alloc allocation, String block) {
        namesChanged();
    }

    /** The trace has ended; write results. */
    default void finish() throws IOException {}
}
