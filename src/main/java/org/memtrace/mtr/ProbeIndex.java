package org.memtrace.mtr;

import java.util.Arrays;
import java.util.Comparator;
import java.util.function.IntToLongFunction;

/**
 * A site table's probe addresses (link-time), ascending, and the entry each names: an index into the kept
 * entries, or {@link #RELAXED} for a relaxed site; one entry an address, the one the section lists last.
 */
record ProbeIndex(long[] probes, int[] entries) {
    static final int RELAXED = -1;

    /** The index of the relaxed sites' probes and of {@code kept} entries, entry {@code i}'s probe at {@code probe(i)}. */
    static ProbeIndex of(long[] relaxed, int kept, IntToLongFunction probe) {
        // in the order a placement used to put them into one map, so that the last one at an address still wins
        int n = relaxed.length + kept;
        long[] keys = new long[n];
        int[] which = new int[n];
        for (int i = 0; i < relaxed.length; i++) {
            keys[i] = relaxed[i];
            which[i] = RELAXED;
        }
        for (int i = 0; i < kept; i++) {
            keys[relaxed.length + i] = probe.applyAsLong(i);
            which[relaxed.length + i] = i;
        }
        boolean ascending = true;
        for (int i = 1; i < n && ascending; i++) ascending = keys[i - 1] < keys[i];
        if (!ascending && nearlySorted(keys, which)) ascending = true;
        if (ascending) return new ProbeIndex(keys, which);
        // the linker keeps each object's table in order; relaxed sites and several objects interleave
        long[] sorted = sortedKeepingLast(keys, which);
        int m = sorted.length / 2;
        int[] entries = new int[m];
        for (int i = 0; i < m; i++) entries[i] = (int) sorted[m + i];
        return new ProbeIndex(Arrays.copyOf(sorted, m), entries);
    }

    /**
     * {@code keys} and {@code values} sorted in place by key, by insertion (stable), when that takes few moves
     * (each key a few places from its own) and leaves the keys distinct: true then. Else false, the arrays
     * still pairing the same keys and values and equal keys in their order, for {@link #sortedKeepingLast}.
     * libc's trampoline file lists 144 k probes of which about 900 are a few places out of order (a group
     * probe stores its sites' slots in another order than it lists them), which this puts right in one pass
     * where the full sort took tens of milliseconds of a start-up.
     */
    static boolean nearlySorted(long[] keys, int[] values) {
        int n = keys.length;
        long budget = 8L * n;
        for (int i = 1; i < n; i++) {
            long k = keys[i];
            int v = values[i], j = i - 1;
            boolean spent = false;
            while (j >= 0 && keys[j] > k && !(spent = --budget < 0)) {
                keys[j + 1] = keys[j];
                values[j + 1] = values[j];
                j--;
            }
            keys[j + 1] = k;
            values[j + 1] = v;
            if (spent || j >= 0 && keys[j] == k) return false; // a key twice: which one wins is sortedKeepingLast's to say
        }
        return true;
    }

    /**
     * The distinct keys ascending, then for each the value that came last with it: as one array, keys first.
     * Sorted as primitives (each key's offset from the smallest, shifted, with its position below), which
     * keeps equal keys in their order; boxed only when the keys span too much for that.
     */
    static long[] sortedKeepingLast(long[] keys, int[] values) {
        int n = keys.length;
        long min = Long.MAX_VALUE, max = Long.MIN_VALUE;
        for (long k : keys) {
            min = Math.min(min, k);
            max = Math.max(max, k);
        }
        int bits = 64 - Long.numberOfLeadingZeros(n);
        long[] order = new long[n];
        if (n > 0 && max - min >= 0 && max - min < 1L << (63 - bits)) {
            for (int i = 0; i < n; i++) order[i] = (keys[i] - min) << bits | i;
            Arrays.sort(order);
            for (int i = 0; i < n; i++) order[i] &= (1L << bits) - 1;
        } else {
            Integer[] boxed = new Integer[n];
            for (int i = 0; i < n; i++) boxed[i] = i;
            Arrays.sort(boxed, Comparator.comparingLong(i -> keys[i])); // stable
            for (int i = 0; i < n; i++) order[i] = boxed[i];
        }
        long[] k = new long[n];
        long[] v = new long[n];
        int m = 0;
        for (long o : order) {
            int i = (int) o;
            if (m > 0 && k[m - 1] == keys[i]) m--;
            k[m] = keys[i];
            v[m++] = values[i];
        }
        long[] out = Arrays.copyOf(k, 2 * m);
        System.arraycopy(v, 0, out, m, m);
        return out;
    }
}
