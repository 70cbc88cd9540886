package org.memtrace.analysis;

import org.memtrace.trace.Naming;

/**
 * The naming behind a cache that every analysis shares: names are resolved only when an analysis asks, and
 * then once per data address and once per instruction until they can change. Data names can change with
 * any event that is not an access (an allocation, a release, a module); code names only with events that
 * are neither accesses nor allocator calls. A slot is valid while its generation is the current one, so
 * invalidating is one increment, whatever the cache holds.
 */
final class Names {
    private static final int DATA_SLOTS = 1 << 14;
    private static final int CODE_SLOTS = 1 << 12;
    /** Where a source line was looked up and there is none: null is a valid answer, so null can't mark "not yet". */
    private static final String NO_SOURCE = new String("(none)");

    private final Naming naming;
    private final long[] dataAddress = new long[DATA_SLOTS];
    private final int[] dataGeneration = new int[DATA_SLOTS];
    private final String[] region = new String[DATA_SLOTS];
    private final String[] data = new String[DATA_SLOTS];
    private final String[] object = new String[DATA_SLOTS];
    private final long[] codeAddress = new long[CODE_SLOTS];
    private final int[] codeGeneration = new int[CODE_SLOTS];
    private final String[] code = new String[CODE_SLOTS];
    private final String[] source = new String[CODE_SLOTS];
    /** Start at 1: the arrays' zeros are stale. */
    private int dataGen = 1, codeGen = 1;

    Names(Naming naming) {
        this.naming = naming;
    }

    /** An allocator call was observed: data names may differ from here on, code names not. */
    void heapChanged() { dataGen++; }

    /** Anything else but an access was observed (a module, a mapping, an exec): all names may differ. */
    void allChanged() {
        dataGen++;
        codeGen++;
    }

    /** {@link Naming#region} */
    String region(long address) {
        int s = dataSlot(address);
        String r = region[s];
        if (r == null) region[s] = r = naming.region(address);
        return r;
    }

    /** {@link Naming#data} */
    String data(long address) {
        int s = dataSlot(address);
        String d = data[s];
        if (d == null) data[s] = d = naming.data(address);
        return d;
    }

    /** {@link Naming#object} */
    String object(long address) {
        int s = dataSlot(address);
        String o = object[s];
        if (o == null) object[s] = o = naming.object(address);
        return o;
    }

    /** {@link Naming#code} */
    String code(long ip) {
        int s = codeSlot(ip);
        String c = code[s];
        if (c == null) code[s] = c = naming.code(ip);
        return c;
    }

    /** {@link Naming#source}: null when no line table covers the instruction. */
    String source(long ip) {
        int s = codeSlot(ip);
        String c = source[s];
        if (c == null) source[s] = c = nonNull(naming.source(ip));
        return c == NO_SOURCE ? null : c;
    }

    private static String nonNull(String s) { return s == null ? NO_SOURCE : s; }

    private int dataSlot(long address) {
        int s = (int) ((address * 0x9E3779B97F4A7C15L) >>> 50);
        if (dataGeneration[s] != dataGen || dataAddress[s] != address) {
            dataGeneration[s] = dataGen;
            dataAddress[s] = address;
            region[s] = data[s] = object[s] = null;
        }
        return s;
    }

    private int codeSlot(long ip) {
        int s = (int) ((ip * 0x9E3779B97F4A7C15L) >>> 52);
        if (codeGeneration[s] != codeGen || codeAddress[s] != ip) {
            codeGeneration[s] = codeGen;
            codeAddress[s] = ip;
            code[s] = source[s] = null;
        }
        return s;
    }
}
