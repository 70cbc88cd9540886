package org.memtrace.madt;

import java.util.Arrays;

/**
 * The ends of symbolic access lines after their region, {@code ,code,size,tid[,weight][,source]} and the
 * newline, kept by instruction address with the size, thread and weight they were made for: the same for
 * every access of one instruction (or probe site) by one thread, so made once per site and kept until code
 * names can change ({@link #namesChanged}). Written field by field, this was two name lookups and two
 * numbers per line. Two ways per set: the two slots of a pair, the one used last first (python3's run has
 * 40 K sites and more).
 */
final class SiteTails {
    private static final int SITE_BITS = 17;

    /**
     * Per slot, four words: the instruction address, the shape ({@link #shape}), the stamp and weight, unused:
     * a pair's keys in one 64-byte stretch, so that a lookup reads one or two host cache lines, not one per
     * field (the table is 4 MiB; python3's 40 K sites miss the caches in separate arrays).
     */
    private final long[] keys = new long[4 << SITE_BITS];
    private final byte[][] tails = new byte[1 << SITE_BITS][];
    /** Starts at 1: the zero stamps of {@link #keys} are empty slots. */
    private int stamp = 1;

    /** {@code size} and {@code tid} as one key word. */
    static long shape(int size, int tid) {
        return (long) size << 32 | (tid & 0xffffffffL);
    }

    /** The tail kept for this site, thread, size and weight, now first of its pair; null when there is none. */
    byte[] find(long ip, long shape, int weight) {
        int slot = slot(ip);
        long stampAndWeight = stampAndWeight(weight);
        int k = 4 * slot;
        if (keys[k] == ip && keys[k + 1] == shape && keys[k + 2] == stampAndWeight) return tails[slot];
        if (keys[k + 4] == ip && keys[k + 5] == shape && keys[k + 6] == stampAndWeight) {
            byte[] tail = tails[slot + 1];
            move(slot, slot + 1);
            keep(slot, ip, shape, stampAndWeight, tail);
            return tail;
        }
        return null;
    }

    /** Keeps a tail just made for the site ({@link #find} found none): first of its pair, the other one moved second. */
    void add(long ip, long shape, int weight, byte[] tail) {
        int slot = slot(ip);
        move(slot + 1, slot);
        keep(slot, ip, shape, stampAndWeight(weight), tail);
    }

    /** Code names may differ from here on (a module, a mapping): the tails kept so far are stale. */
    void namesChanged() {
        if (stamp == Integer.MAX_VALUE) {
            Arrays.fill(keys, 0);
            stamp = 0;
        }
        stamp++;
    }

    /** The current stamp and a weight as one key word: a slot of an older stamp (or an empty one, stamp 0) never matches. */
    private long stampAndWeight(int weight) {
        return (long) stamp << 32 | (weight & 0xffffffffL);
    }

    private static int slot(long ip) {
        return (int) ((ip * 0x9E3779B97F4A7C15L) >>> 64 - SITE_BITS) & -2;
    }

    private void move(int to, int from) {
        System.arraycopy(keys, 4 * from, keys, 4 * to, 3);
        tails[to] = tails[from];
    }

    private void keep(int slot, long ip, long shape, long stampAndWeight, byte[] tail) {
        int k = 4 * slot;
        keys[k] = ip;
        keys[k + 1] = shape;
        keys[k + 2] = stampAndWeight;
        tails[slot] = tail;
    }
}
