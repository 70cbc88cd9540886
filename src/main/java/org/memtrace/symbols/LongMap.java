package org.memtrace.symbols;

import java.util.Arrays;

/**
 * A map from long keys to non-null values, for the tables looked up per access or per allocator call (the
 * heap's live blocks by start, {@link Intervals}' spans by page): a {@code HashMap<Long, V>} boxes the key
 * of every lookup and allocates a node per entry. Open addressing with linear probing; a removal shifts
 * the entries after it back, so no tombstones accumulate over the millions of malloc/free pairs of a long
 * run. Key 0 (a valid key) has a slot of its own, since 0 marks a free slot.
 */
public final class LongMap<V> {
    private long[] keys = new long[64];
    private Object[] values = new Object[64];
    private int size;
    private V zero;

    public V get(long key) {
        if (key == 0) return zero;
        int mask = keys.length - 1;
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            long k = keys[i];
            if (k == key) return value(i);
            if (k == 0) return null;
        }
    }

    /** Maps {@code key} to {@code value} (not null); returns the value it replaced, null if none. */
    public V put(long key, V value) {
        if (value == null) throw new IllegalArgumentException("null value");
        if (key == 0) {
            V old = zero;
            if (old == null) size++;
            zero = value;
            return old;
        }
        if (2 * (size + 1) > keys.length) grow();
        int mask = keys.length - 1;
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            long k = keys[i];
            if (k == key) {
                V old = value(i);
                values[i] = value;
                return old;
            }
            if (k == 0) {
                keys[i] = key;
                values[i] = value;
                size++;
                return null;
            }
        }
    }

    /** Removes {@code key}; returns its value, null if it had none. */
    public V remove(long key) {
        if (key == 0) {
            V old = zero;
            if (old != null) size--;
            zero = null;
            return old;
        }
        int mask = keys.length - 1;
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            long k = keys[i];
            if (k == 0) return null;
            if (k == key) {
                V old = value(i);
                deleteAt(i, mask);
                size--;
                return old;
            }
        }
    }

    /** Removes {@code key} only while it maps to {@code value} (the same object). */
    public boolean remove(long key, V value) {
        if (get(key) != value || value == null) return false;
        remove(key);
        return true;
    }

    public int size() { return size; }

    /**
     * Empties slot {@code i} and moves back every later entry of the probe run that could not be found
     * past the hole (its home slot is not cyclically within the hole and itself).
     */
    private void deleteAt(int i, int mask) {
        int hole = i;
        for (int j = (i + 1) & mask; keys[j] != 0; j = (j + 1) & mask) {
            int home = slot(keys[j], mask);
            boolean reachable = hole <= j ? hole < home && home <= j : hole < home || home <= j;
            if (reachable) continue;
            keys[hole] = keys[j];
            values[hole] = values[j];
            hole = j;
        }
        keys[hole] = 0;
        values[hole] = null;
    }

    private void grow() {
        long[] oldKeys = keys;
        Object[] oldValues = values;
        keys = new long[oldKeys.length * 2];
        values = new Object[oldKeys.length * 2];
        int mask = keys.length - 1;
        for (int j = 0; j < oldKeys.length; j++) {
            if (oldKeys[j] == 0) continue;
            int i = slot(oldKeys[j], mask);
            while (keys[i] != 0) i = (i + 1) & mask;
            keys[i] = oldKeys[j];
            values[i] = oldValues[j];
        }
        Arrays.fill(oldValues, null);
    }

    @SuppressWarnings("unchecked")
    private V value(int i) { return (V) values[i]; }

    /** Block addresses are 16-byte aligned: the multiplier spreads their upper bits over the table. */
    private static int slot(long key, int mask) {
        return (int) ((key * 0x9E3779B97F4A7C15L) >>> 32) & mask;
    }
}
