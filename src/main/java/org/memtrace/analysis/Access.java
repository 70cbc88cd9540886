package org.memtrace.analysis;

import org.memtrace.trace.Naming;

/**
 * One L or S line of the trace: a fault interpreted with its instruction's shape, or a compiled-in probe,
 * with its line's sequence number. Names are not part of it but asked for: {@link #region}, {@link #data},
 * {@link #object}, {@link #code} and {@link #source} resolve through the stage's shared {@link Names}, so an
 * analysis that never asks costs nothing and two that ask share one lookup.
 *
 * <p>The stage hands out one object per trace and refills it for every access (no allocation per access):
 * an analysis copies what it keeps. {@code weight} is the accesses of the full trace the line stands for in
 * a selective (ma/aia) build, or {@link #UNWEIGHTED} when the line stands for itself.
 */
public final class Access {
    public static final int UNWEIGHTED = -1;

    private final Names names;
    /** The return addresses recorded above the instruction (fault mode's access stacks), null when none were. */
    private long[] callers;
    private long sequence, ip, address;
    private int tid, size, weight;
    private boolean store;

    Access(Names names) {
        this.names = names;
    }

    /** A stand-alone access, for tests and tools that build accesses without a stage. */
    public static Access of(Naming naming, long sequence, int tid, long ip, long address, int size, boolean store) {
        return new Access(new Names(naming)).set(sequence, tid, ip, address, size, store, UNWEIGHTED);
    }

    Access set(long sequence, int tid, long ip, long address, int size, boolean store, int weight) {
        return set(sequence, tid, ip, address, size, store, weight, null);
    }

    Access set(long sequence, int tid, long ip, long address, int size, boolean store, int weight, long[] callers) {
        this.callers = callers;
        this.sequence = sequence;
        this.tid = tid;
        this.ip = ip;
        this.address = address;
        this.size = size;
        this.store = store;
        this.weight = weight;
        return this;
    }

    /** The second half of a read-modify-write: the store after the load, on the next line. */
    Access asStore(long sequence) {
        this.sequence = sequence;
        this.store = true;
        return this;
    }

    public long sequence() { return sequence; }

    public int tid() { return tid; }

    public long ip() { return ip; }

    public long address() { return address; }

    /** The operand's size in bytes, 0 when the instruction's shape is unknown. */
    public int size() { return size; }

    public boolean store() { return store; }

    public int weight() { return weight; }

    /**
     * The access's stack (docs/stacks.md, "Access stacks"): its instruction's frames, then its callers', named
     * and interned when first asked for; null when the trace recorded none for it (a trace of rewrite or
     * compiled-in mode, or of depth 1).
     */
    public Stack stack() { return callers == null ? null : names.accessStack(ip, callers); }

    public boolean weighted() { return weight != UNWEIGHTED; }

    /** {@link Naming#region} of the address, as the line's second field. */
    public String region() { return names.region(address); }

    /**
     * {@link Naming#span}: the addresses named like this one ({@code base+offset}, one region), or null when
     * its names must be asked for one by one ({@link #data}, {@link #region}).
     */
    public Naming.Span span() { return names.span(address); }

    /** {@link Naming#data}: the address as the symbolic line names it. */
    public String data() { return names.data(address); }

    /** {@link Naming#object}: the object and offset, without a field path. */
    public String object() { return names.object(address); }

    /** {@link Naming#code}: the instruction as {@code function+offset}. */
    public String code() { return names.code(ip); }

    /** {@link Naming#code} of another instruction, {@code ip}: the access before this one's, say. */
    String codeAt(long ip) { return names.code(ip); }

    /** {@link Naming#inlinedSource}: the instruction's {@code file:line} (with the calls inlined there), or null. */
    public String source() { return names.source(ip); }

    @Override
    public String toString() {
        return (store ? "S" : "L") + sequence + ":0x" + Long.toHexString(address) + "," + size + " ip=0x" + Long.toHexString(ip)
                + " tid=" + tid + (weighted() ? " weight=" + weight : "");
    }
}
