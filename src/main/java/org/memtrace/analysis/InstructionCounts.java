package org.memtrace.analysis;

import org.memtrace.cache.CacheHierarchy;

/**
 * The cache simulation's counts per instruction address, cg_annotate's six data events: loads and stores
 * (Dr, Dw), first-level load and store misses (D1mr, D1mw), last-level load and store misses (DLmr, DLmw).
 * One open-addressing array, a slot's key and counts in one 64-byte line, so an access is counted without
 * boxing or allocation. The key {@link Long#MIN_VALUE} marks an empty slot; it is not a canonical x86-64
 * address.
 */
public final class InstructionCounts {
    /** Indexes of the counts in the array {@link Visitor#visit} receives. */
    public static final int LOADS = 0, STORES = 1, L1_LOAD_MISSES = 2, L1_STORE_MISSES = 3, LL_LOAD_MISSES = 4, LL_STORE_MISSES = 5;
    /** The counts per key. */
    public static final int COUNTS = 6;
    private static final int SLOT = 8;
    private static final long EMPTY = Long.MIN_VALUE;

    /** Receives one key's counts (an array reused between calls: copy what is kept). */
    @FunctionalInterface
    public interface Visitor {
        void visit(long ip, long[] counts);
    }

    private long[] table = empty(1 << 10);
    private int size;
    /** The key counted last and its slot: a loop's accesses come from one instruction in a row. */
    private long lastKey = EMPTY;
    private int lastSlot;

    private static long[] empty(int slots) {
        long[] t = new long[slots * SLOT];
        for (int i = 0; i < t.length; i += SLOT) t[i] = EMPTY;
        return t;
    }

    /** One access (a load or a store) by {@code ip} and its misses, as {@link CacheHierarchy#access} returned them. */
    void add(long ip, boolean store, long result) {
        int s = slot(ip);
        int kind = store ? 1 : 0;
        table[s + 1 + LOADS + kind]++;
        if (result == 0) return;
        table[s + 1 + L1_LOAD_MISSES + kind] += CacheHierarchy.firstLevelMisses(result);
        table[s + 1 + LL_LOAD_MISSES + kind] += CacheHierarchy.lastLevelMisses(result);
    }

    private int slot(long key) {
        if (key == lastKey) return lastSlot;
        if (key == EMPTY) throw new IllegalArgumentException("not an address: " + key);
        int mask = table.length / SLOT - 1;
        int i = (int) ((key * 0x9E3779B97F4A7C15L) >>> 32) & mask;
        while (true) {
            long k = table[SLOT * i];
            if (k == key) break;
            if (k == EMPTY) {
                if ((size + 1) * 2 > mask + 1) {
                    grow();
                    return slot(key);
                }
                table[SLOT * i] = key;
                size++;
                break;
            }
            i = (i + 1) & mask;
        }
        lastKey = key;
        lastSlot = SLOT * i;
        return lastSlot;
    }

    private void grow() {
        long[] old = table;
        table = empty(old.length / SLOT * 2);
        lastKey = EMPTY;   // its slot was one of the old table
        size = 0;
        for (int i = 0; i < old.length; i += SLOT) {
            if (old[i] == EMPTY) continue;
            System.arraycopy(old, i + 1, table, slot(old[i]) + 1, COUNTS);
        }
    }

    public void forEach(Visitor v) {
        long[] counts = new long[COUNTS];
        for (int i = 0; i < table.length; i += SLOT) {
            if (table[i] == EMPTY) continue;
            System.arraycopy(table, i + 1, counts, 0, COUNTS);
            v.visit(table[i], counts);
        }
    }
}
