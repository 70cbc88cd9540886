package org.memtrace.symbols;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Disjoint half-open address intervals, each carrying a value. Putting an interval overwrites whatever it
 * overlaps (the parts outside it survive, trimmed), which is how memory behaves: the most recent mapping or
 * block at an address is the one that is there.
 */
public final class Intervals<V> {

    /** One interval; {@code start} is inclusive, {@code end} exclusive. */
    public record Span<V>(long start, long end, V value) {
        public boolean contains(long address) {
            return address >= start && address < end;
        }
    }

    private final TreeMap<Long, Span<V>> spans = new TreeMap<>();

    public Span<V> get(long address) {
        Map.Entry<Long, Span<V>> e = spans.floorEntry(address);
        if (e == null) return null;
        Span<V> s = e.getValue();
        return address < s.end() ? s : null;
    }

    public void put(long start, long end, V value) {
        if (end <= start) return;
        remove(start, end);
        spans.put(start, new Span<>(start, end, value));
    }

    public void remove(long start, long end) {
        if (end <= start) return;
        Map.Entry<Long, Span<V>> before = spans.lowerEntry(start);
        if (before != null && before.getValue().end() > start) {
            Span<V> b = before.getValue();
            spans.put(b.start(), new Span<>(b.start(), start, b.value()));
            if (b.end() > end) spans.put(end, new Span<>(end, b.end(), b.value()));
        }
        Map.Entry<Long, Span<V>> last = spans.lowerEntry(end);
        if (last != null && last.getKey() >= start && last.getValue().end() > end) {
            Span<V> l = last.getValue();
            spans.put(end, new Span<>(end, l.end(), l.value()));
        }
        spans.subMap(start, true, end, false).clear();
    }

    /** The spans overlapping {@code [start, end)}, in address order, untrimmed. */
    public List<Span<V>> overlapping(long start, long end) {
        List<Span<V>> list = new ArrayList<>();
        Span<V> first = get(start);
        if (first != null && first.start() < start) list.add(first);
        if (end > start) list.addAll(spans.subMap(start, true, end, false).values());
        return list;
    }

    public void clear() {
        spans.clear();
    }

    public int size() {
        return spans.size();
    }
}
