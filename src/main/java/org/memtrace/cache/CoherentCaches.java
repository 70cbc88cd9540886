package org.memtrace.cache;

import java.util.ArrayList;
import java.util.List;

/**
 * Several cores, each with private levels, over an optional shared last level, kept coherent MESI-style by
 * snooping: a store invalidates every other core's private copies of the line (a dirty one is first written
 * into the shared level: a HITM), and a load that misses the private levels takes a dirty copy from the
 * core that holds it (written into the shared level, the holder's copies become clean: shared) before it asks
 * the shared level. Each private hierarchy behaves as {@link CacheHierarchy} does (write-allocate, write-back,
 * non-inclusive, the fill before the victim's writeback); the coherence unit is the line, so all levels
 * have one line size.
 *
 * <p>The states are not stored but read from the caches: a core holds a line Modified when one of its
 * private levels has it dirty, Shared or Exclusive when it has it clean (the two differ only in whether
 * another core holds it, which the snoop finds out), Invalid when none has it. A store that hits a dirty
 * first-level copy needs no snoop (a dirty copy is the only one).
 *
 * <p>What it gets wrong: no timing (a transfer costs nothing but a count), no snoop filter or directory (the
 * LLC does not track sharers, and an inclusive LLC's back-invalidations are not modelled), no upgrade
 * race between cores: each access is atomic, in trace order.
 */
public final class CoherentCaches {
    /** What the multi-core report hears: a line moved away from {@code holder}'s private caches because of {@code requester}. */
    public interface Transfers {
        /**
         * {@code holder} had the line (dirty: a HITM, its data went to the shared level); a store of
         * {@code requester} invalidated it, or a load took its dirty copy and left it shared.
         */
        void transfer(int requester, int holder, long lineAddress, boolean dirty, boolean store);
    }

    /** The most cores simulated: what the largest machines have, and private levels that fit in memory. */
    public static final int MAX_CORES = 1024;

    private final int cores, privateLevels, lineBits;
    /** levels[core][i]: the core's private levels, then the shared level (the same object in every row) if any. */
    private final CacheLevel[][] levels;
    private final long[][] loads, stores, loadMisses, storeMisses, writebacks;
    private final long[] invalidated, hitm;

    /**
     * {@code geometries} from the first level down; with {@code sharedLast} the last of them is one cache
     * shared by all cores. Private level i of core c draws RANDOM victims from a generator seeded with
     * {@code seed + c * levels + i}, the shared level with {@code seed + levels - 1} (core 0's numbering,
     * so one core is seeded as {@link CacheHierarchy} seeds it).
     */
    public CoherentCaches(List<CacheGeometry> geometries, boolean sharedLast, int cores, Policy policy, long seed) {
        if (geometries.isEmpty()) throw new IllegalArgumentException("no cache level");
        // each core's private levels are allocated up front: --cores=2147483647 ran the JVM out of memory
        if (cores < 1 || cores > MAX_CORES) throw new IllegalArgumentException("--cores must be 1 to " + MAX_CORES + ", not " + cores);
        int line = geometries.getFirst().lineSize();
        for (CacheGeometry g : geometries)
            if (g.lineSize() != line)
                throw new IllegalArgumentException("with several cores every level needs the same line size (the coherence unit), not "
                        + line + " and " + g.lineSize());
        int n = geometries.size();
        this.cores = cores;
        this.privateLevels = sharedLast && n > 1 ? n - 1 : n;
        this.lineBits = Integer.numberOfTrailingZeros(line);
        CacheLevel shared = privateLevels < n ? CacheLevel.of(geometries.getLast(), policy, seed + n - 1) : null;
        levels = new CacheLevel[cores][n];
        for (int c = 0; c < cores; c++) {
            for (int i = 0; i < privateLevels; i++) levels[c][i] = CacheLevel.of(geometries.get(i), policy, seed + (long) c * n + i);
            if (shared != null) levels[c][n - 1] = shared;
        }
        loads = new long[cores][n];
        stores = new long[cores][n];
        loadMisses = new long[cores][n];
        storeMisses = new long[cores][n];
        writebacks = new long[cores][n];
        invalidated = new long[cores];
        hitm = new long[cores];
    }

    public int cores() { return cores; }

    public int lineSize() { return 1 << lineBits; }

    /** How many of the levels are private to a core (the rest, at most one, is shared). */
    public int privateLevels() { return privateLevels; }

    /**
     * One access of {@code size} bytes (0 counts as 1) by {@code core}, split into the lines it covers.
     * Returns the lines that missed the first level (low 32 bits) and the last level (high 32 bits), as
     * {@link CacheHierarchy#access} does.
     */
    public long access(int core, long address, long size, boolean store, Transfers transfers) {
        long first = address >>> lineBits, last = (address + Math.max(size, 1) - 1) >>> lineBits;
        long l1 = 0, ll = 0;
        for (long line = first; line - last <= 0; line++) {
            int reached = accessLine(core, line << lineBits, store, transfers);
            if (reached > 0) l1++;
            if (reached == levels[core].length) ll++;
        }
        return l1 | ll << 32;
    }

    /**
     * A demand access by {@code core} to the line holding {@code address}. Returns the level that had it (0 is
     * the first level; the number of levels: memory); a result of {@link #privateLevels} or more means the
     * core had no copy before.
     */
    public int accessLine(int core, long address, boolean store, Transfers transfers) {
        long line = address >>> lineBits;
        if (store && cores > 1 && levels[core][0].state(line) != CacheLevel.DIRTY) snoop(core, line, true, transfers);
        return request(core, 0, line, store, transfers);
    }

    private int request(int core, int i, long line, boolean store, Transfers transfers) {
        CacheLevel[] mine = levels[core];
        // a load that no private level has: the other cores' dirty copies come down first
        if (i == privateLevels && !store && cores > 1) snoop(core, line, false, transfers);
        if (i == mine.length) return i;
        CacheLevel c = mine[i];
        if (store) stores[core][i]++;
        else loads[core][i]++;
        boolean dirties = store && i == 0;
        if (c.lookup(line, dirties)) return i;
        if (store) storeMisses[core][i]++;
        else loadMisses[core][i]++;
        int reached = request(core, i + 1, line, store, transfers);
        long victim = c.insert(line, dirties);
        if (victim != CacheLevel.CLEAN) writeBack(core, i, victim);
        return reached;
    }

    /** Level i of {@code core} evicted a dirty line: the next level takes it as a write. */
    private void writeBack(int core, int i, long line) {
        writebacks[core][i]++;
        int next = i + 1;
        if (next == levels[core].length) return;
        CacheLevel c = levels[core][next];
        if (c.lookup(line, true)) return;
        long victim = c.insert(line, true);
        if (victim != CacheLevel.CLEAN) writeBack(core, next, victim);
    }

    /** The other cores' private copies of the line, for a store (invalidate them) or a load (clean a dirty one). */
    private void snoop(int requester, long line, boolean store, Transfers transfers) {
        for (int o = 0; o < cores; o++) {
            if (o == requester) continue;
            int state = CacheLevel.ABSENT;
            for (int i = 0; i < privateLevels; i++) state = Math.max(state, levels[o][i].state(line));
            if (state == CacheLevel.ABSENT || (!store && state != CacheLevel.DIRTY)) continue;
            boolean dirty = state == CacheLevel.DIRTY;
            if (dirty) {
                hitm[o]++;
                for (int i = 0; i < privateLevels; i++) levels[o][i].clean(line);
                // the data goes to the shared level (or memory), where the requester's miss then finds it
                if (privateLevels < levels[o].length) {
                    CacheLevel s = levels[o][privateLevels];
                    if (!s.lookup(line, true)) {
                        long victim = s.insert(line, true);
                        if (victim != CacheLevel.CLEAN) writeBack(o, privateLevels, victim);
                    }
                }
            }
            if (store) {
                invalidated[o]++;
                for (int i = 0; i < privateLevels; i++) levels[o][i].invalidate(line);
            }
            if (transfers != null) transfers.transfer(requester, o, line << lineBits, dirty, store);
        }
    }

    /** Whether one of {@code core}'s private levels has the line holding {@code address}. */
    public boolean holds(int core, long address) {
        long line = address >>> lineBits;
        for (int i = 0; i < privateLevels; i++) if (levels[core][i].state(line) != CacheLevel.ABSENT) return true;
        return false;
    }

    /** One core's levels (the shared one counting this core's requests and victims only), named L1, L2, …. */
    public List<LevelStats> stats(int core) {
        List<LevelStats> s = new ArrayList<>();
        for (int i = 0; i < levels[core].length; i++)
            s.add(new LevelStats("L" + (i + 1), levels[core][i].geometry, loads[core][i], stores[core][i], loadMisses[core][i],
                    storeMisses[core][i], writebacks[core][i]));
        return s;
    }

    /** Every level summed over the cores. */
    public List<LevelStats> totals() {
        List<LevelStats> s = new ArrayList<>();
        for (int i = 0; i < levels[0].length; i++) {
            long ld = 0, st = 0, lm = 0, sm = 0, wb = 0;
            for (int c = 0; c < cores; c++) {
                ld += loads[c][i];
                st += stores[c][i];
                lm += loadMisses[c][i];
                sm += storeMisses[c][i];
                wb += writebacks[c][i];
            }
            s.add(new LevelStats("L" + (i + 1), levels[0][i].geometry, ld, st, lm, sm, wb));
        }
        return s;
    }

    /** Lines of this core's private caches invalidated by other cores' stores. */
    public long invalidated(int core) { return invalidated[core]; }

    /** Times another core's access found this core's copy dirty (HITM: a modified line moved). */
    public long hitm(int core) { return hitm[core]; }
}
