package org.memtrace.event;

/**
 * Where a reader hands the events of a stream, in order, from one thread. Faults and probe records, nearly
 * every record of a trace, may come without an {@link Event} object: a sink that interprets them from their
 * fields overrides {@link #fault} and {@link #probe}, and no object is made per access.
 */
@FunctionalInterface
public interface EventSink {
    void accept(Event event);

    /** A fault record ({@link Event.Access}) by its fields; by default made into the event. */
    default void fault(int tid, long ip, long address, boolean write, boolean sameStep) {
        accept(new Event.Access(tid, ip, address, write, sameStep));
    }

    /** A probe record ({@link Event.Probe}) by its fields; by default made into the event. */
    default void probe(int tid, long address, Event.ProbeSite site) {
        accept(new Event.Probe(tid, address, site));
    }
}
