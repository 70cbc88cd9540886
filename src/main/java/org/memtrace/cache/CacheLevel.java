package org.memtrace.cache;

/**
 * One set-associative cache: which lines it holds, which are dirty, and the replacement state. Only the
 * multi-core model ({@link CoherentCaches}) invalidates lines; in one core's hierarchy a set fills up and
 * stays full. Two layouts: {@link RecencyLevel} for the policies
 * whose victim is the oldest of an order (LRU, FIFO), {@link WayLevel} for those that need way numbers
 * (random, tree-PLRU). A run uses one of them for all its levels, so the calls stay monomorphic.
 */
abstract sealed class CacheLevel permits RecencyLevel, WayLevel {
    /** {@link #insert} evicted nothing that must be written back. */
    static final long CLEAN = -1;

    final CacheGeometry geometry;
    final int lineBits;
    final int ways;
    final int setMask;

    CacheLevel(CacheGeometry geometry) {
        this.geometry = geometry;
        this.lineBits = geometry.lineBits();
        this.ways = geometry.ways();
        this.setMask = geometry.sets() - 1;
    }

    static CacheLevel of(CacheGeometry geometry, Policy policy, long seed) {
        return switch (policy) {
            case LRU -> new RecencyLevel(geometry, true);
            case FIFO -> new RecencyLevel(geometry, false);
            case RANDOM, PLRU -> new WayLevel(geometry, policy, seed);
        };
    }

    /** Whether the line is present; a hit counts as a use, and {@code write} marks the line dirty. */
    abstract boolean lookup(long line, boolean write);

    /**
     * Puts a line that {@link #lookup} did not find into its set; returns the evicted line if it was dirty
     * (the caller writes it back), else {@link #CLEAN}.
     */
    abstract long insert(long line, boolean write);

    /** {@link #ABSENT}, {@link #PRESENT} (clean) or {@link #DIRTY}; a snoop, so the replacement state does not change. */
    abstract int state(long line);

    static final int ABSENT = 0, PRESENT = 1, DIRTY = 2;

    /** Drops the line if present (a coherence invalidation): its way becomes empty, filled first by the next miss. */
    abstract void invalidate(long line);

    /** Clears the line's dirty bit if present (its data went below in a coherence transfer). */
    abstract void clean(long line);
}
