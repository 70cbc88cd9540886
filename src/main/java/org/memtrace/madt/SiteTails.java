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
 * cache lines: with an array per field a lookup touched up to eight. In front of them, direct-mapped, the
 * tails found last ({@link #front}): the table's 4 MiB of keys do not stay in the caches, and 4,096 slots in
 * front of it answer 89 % of python3's lookups (of 35,780 sites in its first 5 M lines).
 */
final class SiteTails {
    private static final int SITE_BITS = 17;
    private static final int STRIDE = 4;

    /** Per slot: ip, shape, weight << 32 | stamp (stamp 0: empty), and a word of padding. */
    private final long[] keys = new long[STRIDE << SITE_BITS];
    private final byte[][] tails = new byte[1 << SITE_BITS][];
    private static final int FRONT_BITS = 12;
    /** Per front slot: ip, shape, weight << 32 | stamp, as a table slot's first three words. */
    private final long[] frontKeys = new long[3 << FRONT_BITS];
    private final byte[][] frontTails = new byte[1 << FRONT_BITS][];
    /** Starts at 1: stamp 0 is an empty slot. */
    private int stamp = 1;

    /** {@code size} and {@code tid} as one key word. */
    static long shape(int size, int tid) {
        return (long) size << 32 | (tid & 0xffffffffL);
    }

    /** The tail kept for this site, thread, size and weight, now first of its pair; null when there is none. */
    byte[] find(long ip, long shape, int weight) {
        long third = (long) weight << 32 | (stamp & 0xffffffffL);
        int front = front(ip);
        long[] f = frontKeys;
        int fat = 3 * front;
        if (f[fat] == ip && f[fat + 1] == shape && f[fat + 2] == third) return frontTails[front];
        int slot = slot(ip);
        long[] k = keys;
        int at = slot * STRIDE;
        byte[] tail;
        if (k[at] == ip && k[at + 1] == shape && k[at + 2] == third) {
            tail = tails[slot];
        } else if (k[at + STRIDE] == ip && k[at + STRIDE + 1] == shape && k[at + STRIDE + 2] == third) {
            tail = tails[slot + 1];
            move(slot + 1, slot);
            keep(slot, ip, shape, third, tail);
        } else {
            return null;
        }
        keepFront(front, ip, shape, third, tail);
        return tail;
    }

    /** Keeps a tail just made for the site ({@link #find} found none): first of its pair, the other one moved second. */
    void add(long ip, long shape, int weight, byte[] tail) {
        int slot = slot(ip);
        long third = (long) weight << 32 | (stamp & 0xffffffffL);
        move(slot + 1, slot);
        keep(slot, ip, shape, third, tail);
        keepFront(front(ip), ip, shape, third, tail);
    }

    /** Code names may differ from here on (a module, a mapping): the tails kept so far are stale. */
    void namesChanged() {
        if (stamp == Integer.MAX_VALUE) {
            Arrays.fill(keys, 0);
            Arrays.fill(frontKeys, 0);
            stamp = 0;
        }
        stamp++;
    }

    /** The first slot of the pair {@code ip} is kept in (package-private: tests put two sites in one pair). */
    static int slot(long ip) {
        return (int) ((ip * 0x9E3779B97F4A7C15L) >>> 64 - SITE_BITS) & -2;
    }

    /** The front slot of {@code ip}: other bits of the hash than {@link #slot}'s, so a pair's two sites rarely share one. */
    static int front(long ip) {
        return (int) ((ip * 0x9E3779B97F4A7C15L) >>> 64 - FRONT_BITS - 17) & ((1 << FRONT_BITS) - 1);
    }

    private void keepFront(int front, long ip, long shape, long third, byte[] tail) {
        int at = 3 * front;
        frontKeys[at] = ip;
        frontKeys[at + 1] = shape;
        frontKeys[at + 2] = third;
        frontTails[front] = tail;
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
