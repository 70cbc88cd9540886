package org.memtrace.madt;

import java.util.Arrays;

/**
 * The ends of symbolic access lines after their region, {@code ,code,size,tid[,weight][,source]} and the
 * newline, kept by instruction address with the size, thread and weight they were made for: the same for
 * every access of one instruction (or probe site) by one thread, so made once per site and kept until code
 * names can change ({@link #namesChanged}). Written field by field, this was two name lookups and two
 * numbers per line. Two ways per set: the two slots of a pair, the one used last first and the other kept
 * second (python3's run has 40 K sites and more: two sites of one pair that take turns must both stay, or
 * each turn makes its tail again, microseconds of naming). A slot's key is three words of one array
 * ({@link #keys}: address, shape, weight and stamp), four words apart, so a pair's keys share one or two
 * cache lines: with an array per field a lookup touched up to eight.
 */
final class SiteTails {
    private static final int SITE_BITS = 17;
    private static final int STRIDE = 4;

    /** Per slot: ip, shape, weight << 32 | stamp (stamp 0: empty), and a word of padding. */
    private final long[] keys = new long[STRIDE << SITE_BITS];
    private final byte[][] tails = new byte[1 << SITE_BITS][];
    /** Starts at 1: stamp 0 is an empty slot. */
    private int stamp = 1;

    /** {@code size} and {@code tid} as one key word. */
    static long shape(int size, int tid) {
        return (long) size << 32 | (tid & 0xffffffffL);
    }

    /** The tail kept for this site, thread, size and weight, now first of its pair; null when there is none. */
    byte[] find(long ip, long shape, int weight) {
        int slot = slot(ip);
        long[] k = keys;
        int at = slot * STRIDE;
        long third = (long) weight << 32 | (stamp & 0xffffffffL);
        if (k[at] == ip && k[at + 1] == shape && k[at + 2] == third) return tails[slot];
        if (k[at + STRIDE] == ip && k[at + STRIDE + 1] == shape && k[at + STRIDE + 2] == third) {
            byte[] tail = tails[slot + 1];
            move(slot + 1, slot);
            keep(slot, ip, shape, third, tail);
            return tail;
        }
        return null;
    }

    /** Keeps a tail just made for the site ({@link #find} found none): first of its pair, the other one moved second. */
    void add(long ip, long shape, int weight, byte[] tail) {
        int slot = slot(ip);
        move(slot + 1, slot);
        keep(slot, ip, shape, (long) weight << 32 | (stamp & 0xffffffffL), tail);
    }

    /** Code names may differ from here on (a module, a mapping): the tails kept so far are stale. */
    void namesChanged() {
        if (stamp == Integer.MAX_VALUE) {
            Arrays.fill(keys, 0);
            stamp = 0;
        }
        stamp++;
    }

    /** The first slot of the pair {@code ip} is kept in (package-private: tests put two sites in one pair). */
    static int slot(long ip) {
        return (int) ((ip * 0x9E3779B97F4A7C15L) >>> 64 - SITE_BITS) & -2;
    }

    private void move(int to, int from) {
        keep(to, keys[from * STRIDE], keys[from * STRIDE + 1], keys[from * STRIDE + 2], tails[from]);
    }

    private void keep(int slot, long ip, long shape, long third, byte[] tail) {
        int at = slot * STRIDE;
        keys[at] = ip;
        keys[at + 1] = shape;
        keys[at + 2] = third;
        tails[slot] = tail;
    }
}
