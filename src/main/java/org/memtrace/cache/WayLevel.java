package org.memtrace.cache;

import java.util.SplittableRandom;

/**
 * Random and tree-PLRU, whose victims are way numbers: arrays indexed by {@code set * ways + way}, the ways
 * of a set filled in order (the lowest empty way first) and a per-set count of the valid ones.
 */
final class WayLevel extends CacheLevel {
    private final Policy policy;
    private final long[] lines;
    private final boolean[] dirty;
    private final int[] filled;
    /** PLRU: the tree bits of each set, node n (1-based, children 2n and 2n+1) at bit n. */
    private final long[] tree;
    private final SplittableRandom random;
    /** Ways below {@code filled} that an invalidation emptied (marked by {@link #HOLE}); 0 in a one-core run. */
    private int holes;
    private static final long HOLE = Long.MIN_VALUE;

    WayLevel(CacheGeometry geometry, Policy policy, long seed) {
        super(geometry);
        if (policy == Policy.PLRU && (Integer.bitCount(ways) != 1 || ways > 64))
            throw new IllegalArgumentException("tree PLRU needs a power-of-two associativity up to 64, not " + ways);
        this.policy = policy;
        int sets = geometry.sets();
        this.lines = new long[sets * ways];
        this.dirty = new boolean[sets * ways];
        this.filled = new int[sets];
        this.tree = policy == Policy.PLRU ? new long[sets] : null;
        this.random = policy == Policy.RANDOM ? new SplittableRandom(seed) : null;
    }

    @Override
    boolean lookup(long line, boolean write) {
        int set = (int) line & setMask;
        int base = set * ways;
        int n = filled[set];
        for (int w = 0; w < n; w++) {
            if (lines[base + w] == line) {
                if (write) dirty[base + w] = true;
                touch(set, w);
                return true;
            }
        }
        return false;
    }

    @Override
    long insert(long line, boolean write) {
        int set = (int) line & setMask;
        int base = set * ways;
        int w;
        long victim = CLEAN;
        if (holes > 0 && (w = hole(base, filled[set])) >= 0) {
            holes--;
        } else if (filled[set] < ways) {
            w = filled[set]++;
        } else {
            w = policy == Policy.RANDOM ? random.nextInt(ways) : plruVictim(set);
            if (dirty[base + w]) victim = lines[base + w];
        }
        lines[base + w] = line;
        dirty[base + w] = write;
        touch(set, w);
        return victim;
    }

    /** The lowest emptied way of the set, or -1. */
    private int hole(int base, int n) {
        for (int w = 0; w < n; w++) if (lines[base + w] == HOLE) return w;
        return -1;
    }

    @Override
    int state(long line) {
        int i = find(line);
        return i < 0 ? ABSENT : dirty[i] ? DIRTY : PRESENT;
    }

    @Override
    void invalidate(long line) {
        int i = find(line);
        if (i < 0) return;
        // the way stays in place (PLRU's tree and random's way numbers keep their meaning), marked empty
        lines[i] = HOLE;
        dirty[i] = false;
        holes++;
    }

    @Override
    void clean(long line) {
        int i = find(line);
        if (i >= 0) dirty[i] = false;
    }

    private int find(long line) {
        int set = (int) line & setMask;
        int base = set * ways;
        for (int w = 0, n = filled[set]; w < n; w++) if (lines[base + w] == line) return base + w;
        return -1;
    }

    private int plruVictim(int set) {
        long bits = tree[set];
        int node = 1;
        while (node < ways) node = 2 * node + (int) (bits >>> node & 1);
        return node - ways;
    }

    private void touch(int set, int way) {
        if (tree == null) return;
        // Walk from the leaf up: each parent's bit points to the sibling subtree, away from this way.
        long bits = tree[set];
        for (int node = way + ways; node > 1; node >>>= 1) {
            int parent = node >>> 1;
            long away = (node & 1) ^ 1;
            bits = bits & ~(1L << parent) | away << parent;
        }
        tree[set] = bits;
    }
}
