package org.memtrace.analysis;

/**
 * First- and last-level miss counts keyed by an address, in one open-addressing array (key and both counts
 * side by side, so an update touches one cache line): a miss is counted without boxing or allocation,
 * which matters when nearly every access misses. The key {@link Long#MIN_VALUE} marks an empty slot; it is
 * not a canonical x86-64 address.
 */
final class MissCounts {
    private static final long EMPTY = Long.MIN_VALUE;
    private static final int SMALL = 1 << 10;

    /** Receives one key's counts. */
    @FunctionalInterface
    interface Visitor {
        void visit(long key, long firstLevel, long lastLevel);
    }

    /** Slot i holds key, first-level and last-level count at 4i, 4i+1, 4i+2 (4i+3 pads to 32 bytes). */
    private long[] table;
    private int size;
    /** The key added last and its slot's index in {@link #table}: a loop's misses come from one instruction in a row. */
    private long lastKey = EMPTY;
    private int lastSlot;

    MissCounts() { table = empty(SMALL); }

    private static long[] empty(int slots) {
        long[] t = new long[slots * 4];
        for (int i = 0; i < t.length; i += 4) t[i] = EMPTY;
        return t;
    }

    void add(long key, long firstLevel, long lastLevel) {
        if (key == EMPTY) throw new IllegalArgumentException("not an address: " + key);
        if (key == lastKey) {
            table[lastSlot + 1] += firstLevel;
            table[lastSlot + 2] += lastLevel;
            return;
        }
        int mask = table.length / 4 - 1;
        int i = (int) ((key * 0x9E3779B97F4A7C15L) >>> 32) & mask;
        while (true) {
            long k = table[4 * i];
            if (k == key) break;
            if (k == EMPTY) {
                if ((size + 1) * 2 > mask + 1) {
                    grow();
                    add(key, firstLevel, lastLevel);
                    return;
                }
                table[4 * i] = key;
                size++;
                break;
            }
            i = (i + 1) & mask;
        }
        table[4 * i + 1] += firstLevel;
        table[4 * i + 2] += lastLevel;
        lastKey = key;
        lastSlot = 4 * i;
    }

    private void grow() {
        long[] old = table;
        table = empty(old.length / 2);
        lastKey = EMPTY;   // its slot was one of the old table
        size = 0;
        for (int i = 0; i < old.length; i += 4) if (old[i] != EMPTY) add(old[i], old[i + 1], old[i + 2]);
    }

    void forEach(Visitor v) {
        for (int i = 0; i < table.length; i += 4) if (table[i] != EMPTY) v.visit(table[i], table[i + 1], table[i + 2]);
    }
}
