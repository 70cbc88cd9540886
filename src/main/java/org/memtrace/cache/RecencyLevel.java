package org.memtrace.cache;

/**
 * LRU and FIFO: each set keeps its lines in order, the newest (LRU: the most recently used; FIFO: the most
 * recently filled) first, so the victim of a full set is its last line and no time stamps are kept. A hit
 * near the front, the common case, reads one host cache line of the set; an LRU hit further back moves the
 * line to the front. Which way a line sits in is not observable under these two policies (the victim is
 * defined by age alone), which is what lets the order stand in for way numbers.
 */
final class RecencyLevel extends CacheLevel {
    /** LRU: a hit moves the line to the front. FIFO: hits leave the order alone. */
    private final boolean hitsReorder;
    /** Set s holds its lines in [s * ways, s * ways + filled[s]), newest first. */
    private final long[] lines;
    private final boolean[] dirty;
    private final int[] filled;

    RecencyLevel(CacheGeometry geometry, boolean hitsReorder) {
        super(geometry);
        this.hitsReorder = hitsReorder;
        this.lines = new long[geometry.sets() * ways];
        this.dirty = new boolean[geometry.sets() * ways];
        this.filled = new int[geometry.sets()];
    }

    @Override
    boolean lookup(long line, boolean write) {
        int set = (int) line & setMask;
        int base = set * ways;
        int end = base + filled[set];
        for (int i = base; i < end; i++) {
            if (lines[i] == line) {
                boolean d = dirty[i] | write;
                if (hitsReorder) {
                    shiftDown(base, i);
                    lines[base] = line;
                    dirty[base] = d;
                } else {
                    dirty[i] = d;
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
            if (dirty[last]) victim = lines[last];
        }
        shiftDown(base, last);
        lines[base] = line;
        dirty[base] = write;
        return victim;
    }

    /** Moves the lines in [base, to) one place back, over the one at {@code to}. */
    private void shiftDown(int base, int to) {
        for (int i = to; i > base; i--) {
            lines[i] = lines[i - 1];
            dirty[i] = dirty[i - 1];
        }
    }
}
