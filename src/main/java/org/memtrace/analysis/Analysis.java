package org.memtrace.analysis;

import java.io.IOException;
import org.memtrace.event.Event;

/**
 * One consumer of the interpreted trace, fed by {@link Interpretation}: the text writer, the summary, the
 * cache simulation, the exports, the report. The stage calls the methods in stream order, from one thread:
 * {@link #event} (or {@link #fault}, {@link #probe}) for every recorded event, then what that event stands for in the trace ({@link #access}
 * once or twice, {@link #block}, {@link #allocation}, or {@link #namesChanged}), and {@link #finish} once
 * when the trace has ended. When a method runs, the naming describes the program at that event, so a name
 * asked for there is the name the text trace prints on that line.
 *
 * <p>An analysis sees nothing but these calls: it does not depend on another analysis having run, and the
 * command that runs it does not know its type.
 */
public interface Analysis {

    /**
     * Every event as recorded (a module, an allocation…), after the naming has seen it; faults and probe
     * records, nearly every event of a trace, come to {@link #fault} and {@link #probe} instead, without an
     * event object.
     */
    default void event(Event event) {}

    /** A fault as recorded ({@link Event.Access}, by its fields), before the accesses it stands for. */
    default void fault(int tid, long ip, long address, boolean write) {}

    /** A probe record as recorded ({@link Event.Probe}, by its fields), before the accesses it stands for. */
    default void probe(int tid, long address, Event.ProbeSite site) {}

    /**
     * One load or store as its L/S line. The object is reused for the next access: copy what must outlive
     * the call.
     */
    default void access(Access access) {}

    /** A block copy, store or fetch, numbered as its MadT line. */
    default void block(long sequence, Event.Block block) {}

    /**
     * Names may have changed since the last access (an allocation, a release, a new module or mapping): an
     * analysis that caches names drops them. Accesses and block operations never change names.
     */
    default void namesChanged() {}

    /** An allocator call, after the naming has seen it. By default only the names changed. */
    default void allocation(Allocation allocation) {
        namesChanged();
    }

    /**
     * The trace has ended: write results. A failure to write them is an {@link IOException} whose message is
     * the whole sentence the user sees ({@code cannot write report.html: No space left on device}).
     */
    default void finish(Ending ending) throws IOException {}

    /** What a user calls this analysis, in a failure's sentence ({@code memtrace: NAME: message}). */
    default String name() {
        return getClass().getSimpleName();
    }

    /** Whether the output written so far is whole (a writer that hit an error already reported it). */
    default boolean complete() {
        return true;
    }
}
