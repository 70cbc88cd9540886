package org.memtrace.cache;

import java.util.ArrayList;
import java.util.List;

/**
 * Caches in levels: a miss in level i is a demand request to level i+1, the last level misses to memory.
 * Write-allocate and write-back: a store that misses fills the line like a load, only the first level's
 * copy becomes dirty, and a dirty victim is written into the next level (allocating there without a fetch,
 * since a whole line is written). Levels are neither inclusive nor exclusive: each keeps what it was given.
 * The order within a miss: the fill from below first, then the victim's writeback.
 */
public final class CacheHierarchy {
    private final CacheLevel[] levels;
    private final long[] loads, stores, loadMisses, storeMisses, writebacks;
    private final int firstLineBits;

    /** Level i of a RANDOM hierarchy draws from a generator seeded with {@code seed + i}. */
    public CacheHierarchy(List<CacheGeometry> geometries, Policy policy, long seed) {
        if (geometries.isEmpty()) throw new IllegalArgumentException("no cache level");
        levels = new CacheLevel[geometries.size()];
        for (int i = 0; i < levels.length; i++) levels[i] = CacheLevel.of(geometries.get(i), policy, seed + i);
        loads = new long[levels.length];
        stores = new long[levels.length];
        loadMisses = new long[levels.length];
        storeMisses = new long[levels.length];
        writebacks = new long[levels.length];
        firstLineBits = levels[0].lineBits;
    }

    /** Line size of the first level: the unit an access is split into. */
    public int lineSize() { return 1 << firstLineBits; }

    /**
     * One access of {@code size} bytes (0 counts as 1), split into the first level's lines it covers.
     * Returns how many of those lines missed the first level (low 32 bits) and the last level (high 32 bits).
     */
    public long access(long address, long size, boolean store) {
        long first = address >>> firstLineBits;
        long last = (address + Math.max(size, 1) - 1) >>> firstLineBits;
        long l1 = 0, ll = 0;
        for (long line = first; line - last <= 0; line++) {
            int reached = request(0, line << firstLineBits, store);
            if (reached > 0) l1++;
            if (reached == levels.length) ll++;
        }
        return l1 | ll << 32;
    }

    public static int firstLevelMisses(long accessResult) { return (int) accessResult; }

    public static int lastLevelMisses(long accessResult) { return (int) (accessResult >>> 32); }

    /** A demand request for the line holding {@code address} at level i; returns the level that hit (the number of levels: memory). */
    private int request(int i, long address, boolean store) {
        if (i == levels.length) return i;
        CacheLevel c = levels[i];
        long line = address >>> c.lineBits;
        if (store) stores[i]++;
        else loads[i]++;
        boolean dirties = store && i == 0;
        if (c.lookup(line, dirties)) return i;
        if (store) storeMisses[i]++;
        else loadMisses[i]++;
        int reached = request(i + 1, address, store);
        long victim = c.insert(line, dirties);
        if (victim != CacheLevel.CLEAN) writeBack(i, victim << c.lineBits);
        return reached;
    }

    /** Level i evicted the dirty line at {@code address}: level i+1 takes it as a write. */
    private void writeBack(int i, long address) {
        writebacks[i]++;
        int next = i + 1;
        if (next == levels.length) return;
        CacheLevel c = levels[next];
        long line = address >>> c.lineBits;
        if (c.lookup(line, true)) return;
        long victim = c.insert(line, true);
        if (victim != CacheLevel.CLEAN) writeBack(next, victim << c.lineBits);
    }

    /** Level names are L1, L2, …; the counts so far. */
    public List<LevelStats> stats() {
        List<LevelStats> s = new ArrayList<>();
        for (int i = 0; i < levels.length; i++)
            s.add(new LevelStats("L" + (i + 1), levels[i].geometry, loads[i], stores[i], loadMisses[i],
                    storeMisses[i], writebacks[i]));
        return s;
    }
}
