package org.memtrace.cache;

/**
 * LRU and FIFO: each set keeps its lines in order, the newest (LRU: the most recently used; FIFO: the most
 * recently filled) first, so the victim of a full set is its last line and no time stamps are kept. Which
 * way a line sits in is not observable under these two policies (the victim is defined by age alone), which
 * is what lets the order stand in for way numbers. A line and its dirty bit share one long, so a set is one
 * array range: a lookup, a move to the front and an eviction touch nothing else.
 *
 * <p>What it gets wrong: the dirty bit takes the line number's top bit, so with one-byte lines two addresses
 * 2^63 apart would be one line; no user-space address reaches 2^63.
 */
final class RecencyLevel extends CacheLevel {
    /** LRU: a hit moves the line to the front. FIFO: hits leave the order alone. */
    private final boolean hitsReorder;
    /** Set s holds its lines in [s * ways, s * ways + filled[s]), newest first, each as {@code line << 1 | dirty}. */
    private final long[] lines;
    private final int[] filled;

    RecencyLevel(CacheGeometry geometry, boolean hitsReorder) {
        super(geometry);
        this.hitsReorder = hitsReorder;
        this.lines = new long[geometry.sets() * ways];
        this.filled = new int[geometry.sets()];
    }

    @Override
    boolean lookup(long line, boolean write) {
        int set = (int) line & setMask;
        int base = set * ways;
        int end = base + filled[set];
        long clean = line << 1;
        for (int i = base; i < end; i++) {
            long entry = lines[i];
            if ((entry & ~1L) == clean) {
                if (write) entry |= 1;
                if (hitsReorder) {
                    shiftDown(base, i);
                    lines[base] = entry;
                } else {
                    lines[i] = entry;
                }
                return true;
            }
        }
        return false;
    }

    @Override
    long insert(long line, boolean write) {
        int set = (int) line & setMask;
        int base = set * ways;
        int n = filled[set];
        long victim = CLEAN;
        int last;
        if (n < ways) {
            filled[set] = n + 1;
            last = base + n;
        } else {
            last = base + ways - 1;
            if ((lines[last] & 1) != 0) victim = lines[last] >>> 1;
        }
        shiftDown(base, last);
        lines[base] = line << 1 | (write ? 1 : 0);
        return victim;
    }

    @Override
    int state(long line) {
        int i = find(line);
        return i < 0 ? ABSENT : (lines[i] & 1) != 0 ? DIRTY : PRESENT;
    }

    @Override
    void invalidate(long line) {
        int i = find(line);
        if (i < 0) return;
        int set = (int) line & setMask;
        int end = set * ways + --filled[set];
        // the lines behind it move up one place: the order of the others is kept, the empty way is at the end
        for (int j = i; j < end; j++) lines[j] = lines[j + 1];
    }

    @Override
    void clean(long line) {
        int i = find(line);
        if (i >= 0) lines[i] &= ~1L;
    }

    private int find(long line) {
        int set = (int) line & setMask;
        int base = set * ways;
        int end = base + filled[set];
        long clean = line << 1;
        for (int i = base; i < end; i++) if ((lines[i] & ~1L) == clean) return i;
        return -1;
    }

    /** Moves the lines in [base, to) one place back, over the one at {@code to}. */
    private void shiftDown(int base, int to) {
        for (int i = to; i > base; i--) lines[i] = lines[i - 1];
    }
}
