package org.memtrace.trace;

import java.util.Map;
import java.util.TreeMap;

/** Non-overlapping half-open address intervals; a new interval replaces whatever it overlaps. */
final class IntervalMap<V> {
    private record Entry<V>(long end, V value) {}

    private final TreeMap<Long, Entry<V>> byStart = new TreeMap<>(Long::compareUnsigned);

    void put(long start, long end, V value) {
        remove(start, end);
        byStart.put(start, new Entry<>(end, value));
    }

    /** Clears [start, end), cutting intervals that stick out on either side. */
    void remove(long start, long end) {
        if (Long.compareUnsigned(start, end) >= 0) return;
        Map.Entry<Long, Entry<V>> left = byStart.lowerEntry(start);
        if (left != null && Long.compareUnsigned(left.getValue().end(), start) > 0) {
            byStart.put(left.getKey(), new Entry<>(start, left.getValue().value()));
            if (Long.compareUnsigned(left.getValue().end(), end) > 0)
                byStart.put(end, new Entry<>(left.getValue().end(), left.getValue().value()));
        }
        Map.Entry<Long, Entry<V>> e;
        while ((e = byStart.ceilingEntry(start)) != null && Long.compareUnsigned(e.getKey(), end) < 0) {
            byStart.remove(e.getKey());
            if (Long.compareUnsigned(e.getValue().end(), end) > 0) byStart.put(end, e.getValue());
        }
    }

    V get(long address) {
        Map.Entry<Long, Entry<V>> e = byStart.floorEntry(address);
        return e != null && Long.compareUnsigned(address, e.getValue().end()) < 0 ? e.getValue().value() : null;
    }

    int size() { return byStart.size(); }
}
