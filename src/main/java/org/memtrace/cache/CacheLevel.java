package org.memtrace.cache;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * One set-associative cache: which lines it holds, which are dirty, and the replacement state. Arrays
 * indexed by {@code set * ways + way} keep the hot path free of objects; lines are never invalidated, so
 * the ways of a set fill in order and a per-set count says which are valid.
 */
final class CacheLevel {
    /** {@link #insert} evicted nothing that must be written back. */
    static final long CLEAN = -1;

    final CacheGeometry geometry;
    final int lineBits;
    private final Policy policy;
    private final int ways;
    private final int setMask;
    private final long[] lines;
    private final boolean[] dirty;
    private final int[] filled;
    /** LRU: time of last use per way. FIFO: unused. */
    private final long[] lastUse;
    /** FIFO: the way the next eviction of each set takes (ways filled in order 0, 1, …, so the oldest). */
    private final int[] nextOut;
    /** PLRU: the tree bits of each set, node n (1-based, children 2n and 2n+1) at bit n. */
    private final long[] tree;
    private final SplittableRandom random;
    private long clock;

    CacheLevel(CacheGeometry geometry, Policy policy, long seed) {
        if (policy == Policy.PLRU && (Integer.bitCount(geometry.ways()) != 1 || geometry.ways() > 64))
            throw new IllegalArgumentException("tree PLRU needs a power-of-two associativity up to 64, not " + geometry.ways());
        this.geometry = geometry;
        this.policy = policy;
        this.lineBits = geometry.lineBits();
        this.ways = geometry.ways();
        int sets = geometry.sets();
        this.setMask = sets - 1;
        this.lines = new long[sets * ways];
        this.dirty = new boolean[sets * ways];
        this.filled = new int[sets];
        this.lastUse = policy == Policy.LRU ? new long[sets * ways] : null;
        this.nextOut = policy == Policy.FIFO ? new int[sets] : null;
        this.tree = policy == Policy.PLRU ? new long[sets] : null;
        this.random = policy == Policy.RANDOM ? new SplittableRandom(seed) : null;
        Arrays.fill(lines, -1);
    }

    /** Whether the line is present; a hit counts as a use, and {@code write} marks the line dirty. */
    boolean lookup(long line, boolean write) {
        int set = (int) line & setMask;
        int base = set * ways;
        int n = filled[set];
        for (int w = 0; w < n; w++) {
            if (lines[base + w] == line) {
                if (write) dirty[base + w] = true;
                touch(set, base, w);
                return true;
            }
        }
        return false;
    }

    /**
     * Puts a line that {@link #lookup} did not find into its set; returns the evicted line if it was dirty
     * (the caller writes it back), else {@link #CLEAN}.
     */
    long insert(long line, boolean write) {
        int set = (int) line & setMask;
        int base = set * ways;
        int w;
        long victim = CLEAN;
        if (filled[set] < ways) {
            w = filled[set]++;
        } else {
            w = victim(set, base);
            if (dirty[base + w]) victim = lines[base + w];
        }
        lines[base + w] = line;
        dirty[base + w] = write;
        touch(set, base, w);
        return victim;
    }

    private int victim(int set, int base) {
        switch (policy) {
            case LRU -> {
                int oldest = 0;
                for (int w = 1; w < ways; w++) if (lastUse[base + w] < lastUse[base + oldest]) oldest = w;
                return oldest;
            }
            case FIFO -> {
                int w = nextOut[set];
                nextOut[set] = w + 1 == ways ? 0 : w + 1;
                return w;
            }
            case RANDOM -> {
                return random.nextInt(ways);
            }
            case PLRU -> {
                long bits = tree[set];
                int node = 1;
                while (node < ways) node = 2 * node + (int) (bits >>> node & 1);
                return node - ways;
            }
        }
        throw new AssertionError(policy);
    }

    private void touch(int set, int base, int way) {
        switch (policy) {
            case LRU -> lastUse[base + way] = ++clock;
            case PLRU -> {
                // Walk from the leaf up: each parent's bit points to the sibling subtree, away from this way.
                long bits = tree[set];
                for (int node = way + ways; node > 1; node >>>= 1) {
                    int parent = node >>> 1;
                    long away = (node & 1) ^ 1;
                    bits = bits & ~(1L << parent) | away << parent;
                }
                tree[set] = bits;
            }
            default -> { }
        }
    }
}
