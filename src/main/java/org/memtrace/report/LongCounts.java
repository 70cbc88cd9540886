package org.memtrace.report;

/**
 * Read and write counters keyed by a long (a page number, an instruction address), in flat arrays: a trace
 * of 10^8 accesses touches each key many times, and boxed maps would cost more than the counting.
 */
final class LongCounts {
    private static final long EMPTY = Long.MIN_VALUE;
    private long[] keys;
    private long[] reads, writes;
    private int size;
    private long lastKey = EMPTY;
    private int lastSlot;

    LongCounts() {
        allocate(1 << 10);
    }

    private void allocate(int capacity) {
        keys = new long[capacity];
        java.util.Arrays.fill(keys, EMPTY);
        reads = new long[capacity];
        writes = new long[capacity];
    }

    void add(long key, long n, boolean write) {
        int slot = key == lastKey ? lastSlot : slot(key);
        lastKey = key;
        lastSlot = slot;
        if (write) writes[slot] += n;
        else reads[slot] += n;
    }

    private int slot(long key) {
        int mask = keys.length - 1;
        int i = (int) ((key * 0x9E3779B97F4A7C15L) >>> 40) & mask;
        while (keys[i] != key) {
            if (keys[i] == EMPTY) {
                if (++size * 2 > keys.length) {
                    grow();
                    return slot(key);
                }
                keys[i] = key;
                return i;
            }
            i = (i + 1) & mask;
        }
        return i;
    }

    private void grow() {
        long[] k = keys, r = reads, w = writes;
        allocate(k.length * 2);
        size = 0;
        lastKey = EMPTY;
        for (int i = 0; i < k.length; i++) {
            if (k[i] == EMPTY) continue;
            int s = slot(k[i]);
            reads[s] = r[i];
            writes[s] = w[i];
        }
    }

    int size() { return size; }

    @FunctionalInterface
    interface Visitor {
        void visit(long key, long reads, long writes);
    }

    void forEach(Visitor v) {
        for (int i = 0; i < keys.length; i++) if (keys[i] != EMPTY) v.visit(keys[i], reads[i], writes[i]);
    }
}
