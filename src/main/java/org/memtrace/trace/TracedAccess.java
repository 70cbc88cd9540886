package org.memtrace.trace;

/**
 * One L or S line of the trace: a fault interpreted with the instruction's shape, or a compiled-in probe.
 * {@code weight} is the accesses of the full trace the line stands for in a selective (ma/aia) build, or
 * {@link #UNWEIGHTED} when the line stands for itself and prints no weight field.
 */
public record TracedAccess(int tid, long ip, long address, int size, boolean store, int weight) {
    public static final int UNWEIGHTED = -1;

    public TracedAccess(int tid, long ip, long address, int size, boolean store) {
        this(tid, ip, address, size, store, UNWEIGHTED);
    }

    public boolean weighted() { return weight != UNWEIGHTED; }
}
