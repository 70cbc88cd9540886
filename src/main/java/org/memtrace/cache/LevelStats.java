package org.memtrace.cache;

/**
 * What one level saw. Accesses are demand requests: at the first level the program's line accesses, below
 * it the misses of the level above (split by the kind of the access that missed). Writebacks are dirty
 * lines this level evicted and handed to the next level (or memory); they are not counted as accesses.
 */
public record LevelStats(String name, CacheGeometry geometry, long loads, long stores,
                         long loadMisses, long storeMisses, long writebacks) {

    public long accesses() { return loads + stores; }

    public long misses() { return loadMisses + storeMisses; }

    /** Misses per access; 0 when the level saw nothing. */
    public double missRatio() { return accesses() == 0 ? 0 : (double) misses() / accesses(); }
}
