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

    private final long[] ips = new long[1 << SITE_BITS];
    private final long[] shapes = new long[1 << SITE_BITS];
    private final int[] weights = new int[1 << SITE_BITS];
    private final int[] stamps = new int[1 << SITE_BITS];
    private final byte[][] tails = new byte[1 << SITE_BITS][];
    /** Starts at 1: the zeros of {@link #stamps} are empty slots. */
    private int stamp = 1;

    /** {@code size} and {@code tid} as one key word. */
    static long shape(int size, int tid) {
        return (long) size << 32 | (tid & 0xffffffffL);
    }

    /** The tail kept for this site, thread, size and weight, now first of its pair; null when there is none. */
    byte[] find(long ip, long shape, int weight) {
        int slot = slot(ip);
        if (stamps[slot] == stamp && ips[slot] == ip && shapes[slot] == shape && weights[slot] == weight)
            return tails[slot];
        int other = slot + 1;
        if (stamps[other] == stamp && ips[other] == ip && shapes[other] == shape && weights[other] == weight) {
            byte[] tail = tails[other];
            move(slot, other);
            keep(slot, ip, shape, weight, tail);
            return tail;
        }
        return null;
    }

    /** Keeps a tail just made for the site ({@link #find} found none): first of its pair, the other one moved second. */
    void add(long ip, long shape, int weight, byte[] tail) {
        int slot = slot(ip);
        move(slot + 1, slot);
        keep(slot, ip, shape, weight, tail);
    }

    /** Code names may differ from here on (a module, a mapping): the tails kept so far are stale. */
    void namesChanged() {
        if (stamp == Integer.MAX_VALUE) {
            Arrays.fill(stamps, 0);
            stamp = 0;
        }
        stamp++;
    }

    private static int slot(long ip) {
        return (int) ((ip * 0x9E3779B97F4A7C15L) >>> 64 - SITE_BITS) & -2;
    }

    private void move(int to, int from) {
        keep(to, ips[from], shapes[from], weights[from], tails[from]);
        stamps[to] = stamps[from];
    }

    private void keep(int slot, long ip, long shape, int weight, byte[] tail) {
        stamps[slot] = stamp;
        ips[slot] = ip;
        shapes[slot] = shape;
        weights[slot] = weight;
        tails[slot] = tail;
    }
}
