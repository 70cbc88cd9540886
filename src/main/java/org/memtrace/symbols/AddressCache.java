package org.memtrace.symbols;

import java.util.Arrays;

/**
 * Names remembered per address, direct-mapped (a later address in the same slot replaces the earlier one):
 * a trace names the same instructions again and again, and looking them up each time dominates.
 */
final class AddressCache {

    private static final int SIZE = 1 << 13;

    private final long[] keys = new long[SIZE];
    private final String[] names = new String[SIZE];

    /** The name remembered for {@code address}, or null. */
    String get(long address) {
        int slot = slot(address);
        String name = names[slot];
        return name != null && keys[slot] == address ? name : null;
    }

    void put(long address, String name) {
        int slot = slot(address);
        keys[slot] = address;
        names[slot] = name;
    }

    void clear() {
        Arrays.fill(names, null);
    }

    private static int slot(long address) {
        return (int) ((address * 0x9E3779B97F4A7C15L) >>> 51);
    }
}
