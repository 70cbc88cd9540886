package org.memtrace.cache;

/**
 * Which line of a full set a miss evicts. A set that still has an empty way always fills the lowest empty
 * way first, whatever the policy.
 */
public enum Policy {
    /** The least recently used line. */
    LRU,
    /** The line filled longest ago; hits do not reorder. */
    FIFO,
    /** A uniformly random way, drawn from the level's own seeded generator only when a full set evicts. */
    RANDOM,
    /**
     * Tree pseudo-LRU: one bit per inner node of a binary tree over the ways points to the half to evict
     * from; every access flips the bits on its path to point away from it. Needs a power-of-two associativity.
     */
    PLRU
}
