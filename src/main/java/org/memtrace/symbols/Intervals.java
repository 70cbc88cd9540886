package org.memtrace.symbols;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Disjoint half-open address intervals, each carrying a value. Putting an interval overwrites whatever it
 * overlaps (the parts outside it survive, trimmed), which is how memory behaves: the most recent mapping or
 * block at an address is the one that is there.
 *
 * <p>Lookups must keep up with the trace (millions per second over tens of thousands of heap blocks), and a
 * tree walk over that many nodes misses the cache at every level. So intervals of up to
 * {@value #SMALL_PAGES} pages are also filed under each 4 KiB page they touch, in a hash table keyed by page
 * number: a lookup then costs one hash probe and a search among the few intervals of one page. Larger
 * intervals are rare and stay in a tree of their own.
 */
public final class Intervals<V> {

    /** One interval; {@code start} is inclusive, {@code end} exclusive. */
    public record Span<V>(long start, long end, V value) {
        public boolean contains(long address) {
            return address >= start && address < end;
        }
    }

    private static final int PAGE_SHIFT = 12;
    private static final long SMALL_PAGES = 64;

    private final TreeMap<Long, Span<V>> spans = new TreeMap<>();
    private final TreeMap<Long, Span<V>> large = new TreeMap<>();
    private final PageTable<V> pages = new PageTable<>();

    public Span<V> get(long address) {
        Span<V>[] onPage = pages.get(address >>> PAGE_SHIFT);
        if (onPage != null) {
            int lo = 0;
            int hi = onPage.length - 1;
            while (lo <= hi) {
                int mid = (lo + hi) >>> 1;
                Span<V> s = onPage[mid];
                if (address < s.start()) hi = mid - 1;
                else if (address >= s.end()) lo = mid + 1;
                else return s;
            }
        }
        if (large.isEmpty()) return null;
        Map.Entry<Long, Span<V>> e = large.floorEntry(address);
        return e != null && address < e.getValue().end() ? e.getValue() : null;
    }

    public void put(long start, long end, V value) {
        if (end <= start) return;
        // Most puts land where nothing is (a new mapping, a block in fresh memory) or exactly on one span (a
        // block where a freed block of the same size was): one lookup each, and no trimming.
        Span<V> same = get(start);
        if (same != null && same.start() == start && same.end() == end) {
            swap(same, value);
            return;
        }
        if (overlaps(start, end)) remove(start, end);
        insert(new Span<>(start, end, value));
    }

    /** Whether any span overlaps {@code [start, end)}. */
    public boolean overlaps(long start, long end) {
        if (end <= start) return false;
        // the spans are disjoint: if the last one starting below end ends by start, all before it do too
        Map.Entry<Long, Span<V>> last = spans.lowerEntry(end);
        return last != null && last.getValue().end() > start;
    }

    /**
     * Where the gap around {@code address}, which no span holds, begins: the end of the last span below it
     * ({@link Long#MIN_VALUE} when none).
     */
    public long gapStart(long address) {
        Map.Entry<Long, Span<V>> below = spans.floorEntry(address);
        return below == null ? Long.MIN_VALUE : below.getValue().end();
    }

    /** Where the gap around {@code address} ends: the start of the first span above it ({@link Long#MAX_VALUE} when none). */
    public long gapEnd(long address) {
        Map.Entry<Long, Span<V>> above = spans.higherEntry(address);
        return above == null ? Long.MAX_VALUE : above.getKey();
    }

    /**
     * Whether any span touches the 4 KiB page number {@code page}: {@link #overlaps} of the page without a
     * tree walk (and its boxed keys) for the small spans, which are filed under every page they touch.
     */
    public boolean touchesPage(long page) {
        if (pages.get(page) != null) return true;
        if (large.isEmpty()) return false;
        long start = page << PAGE_SHIFT, end = (page + 1) << PAGE_SHIFT;
        Map.Entry<Long, Span<V>> last = large.lowerEntry(end);
        return last != null && last.getValue().end() > start;
    }

    /**
     * Gives span {@code s}, as {@link #get} returned it and still there, a new value over its whole extent
     * (a freed block keeps its place under its released name) without taking it out and putting it back.
     * Returns the new span.
     */
    public Span<V> replace(Span<V> s, V value) {
        if (spans.get(s.start()) != s) throw new IllegalArgumentException("not a current span: " + s);
        return swap(s, value);
    }

    private Span<V> swap(Span<V> s, V value) {
        Span<V> n = new Span<>(s.start(), s.end(), value);
        spans.put(n.start(), n);
        long first = s.start() >>> PAGE_SHIFT;
        long last = (s.end() - 1) >>> PAGE_SHIFT;
        if (last - first >= SMALL_PAGES) {
            large.put(n.start(), n);
        } else {
            for (long p = first; p <= last; p++) pages.replace(p, s, n);
        }
        return n;
    }

    public void remove(long start, long end) {
        if (end <= start) return;
        Map.Entry<Long, Span<V>> before = spans.lowerEntry(start);
        if (before != null && before.getValue().end() > start) {
            Span<V> b = before.getValue();
            delete(b);
            insert(new Span<>(b.start(), start, b.value()));
            if (b.end() > end) insert(new Span<>(end, b.end(), b.value()));
        }
        Map.Entry<Long, Span<V>> last = spans.lowerEntry(end);
        if (last != null && last.getKey() >= start && last.getValue().end() > end) {
            Span<V> l = last.getValue();
            delete(l);
            insert(new Span<>(end, l.end(), l.value()));
        }
        for (Map.Entry<Long, Span<V>> inside = spans.ceilingEntry(start); inside != null && inside.getKey() < end;
                inside = spans.ceilingEntry(start))
            delete(inside.getValue());
    }

    /** The spans overlapping {@code [start, end)}, in address order, untrimmed. */
    public List<Span<V>> overlapping(long start, long end) {
        List<Span<V>> list = new ArrayList<>();
        Map.Entry<Long, Span<V>> first = spans.lowerEntry(start);
        if (first != null && first.getValue().end() > start) list.add(first.getValue());
        if (end > start) list.addAll(spans.subMap(start, true, end, false).values());
        return list;
    }

    public void clear() {
        spans.clear();
        large.clear();
        pages.clear();
    }

    private void insert(Span<V> s) {
        spans.put(s.start(), s);
        long first = s.start() >>> PAGE_SHIFT;
        long last = (s.end() - 1) >>> PAGE_SHIFT;
        if (last - first >= SMALL_PAGES) {
            large.put(s.start(), s);
            return;
        }
        for (long p = first; p <= last; p++) pages.add(p, s);
    }

    private void delete(Span<V> s) {
        spans.remove(s.start());
        long first = s.start() >>> PAGE_SHIFT;
        long last = (s.end() - 1) >>> PAGE_SHIFT;
        if (last - first >= SMALL_PAGES) {
            large.remove(s.start());
            return;
        }
        for (long p = first; p <= last; p++) pages.remove(p, s);
    }

    /** Page number to the small spans touching that page, sorted by start. */
    private static final class PageTable<V> {
        private LongMap<Span<V>[]> byPage = new LongMap<>();

        Span<V>[] get(long page) {
            return byPage.get(page);
        }

        void add(long page, Span<V> s) {
            Span<V>[] old = byPage.get(page);
            if (old == null) {
                @SuppressWarnings("unchecked")
                Span<V>[] one = (Span<V>[]) new Span<?>[] {s};
                byPage.put(page, one);
                return;
            }
            int found = indexOf(old, s.start());
            int at = found < 0 ? -found - 1 : found;
            Span<V>[] grown = Arrays.copyOf(old, old.length + 1);
            System.arraycopy(old, at, grown, at + 1, old.length - at);
            grown[at] = s;
            byPage.put(page, grown);
        }

        /** Puts {@code n} where {@code s} is on the page; both have the same start, so the order holds. */
        void replace(long page, Span<V> s, Span<V> n) {
            Span<V>[] onPage = get(page);
            int at = onPage == null ? -1 : indexOf(onPage, s.start());
            if (at < 0 || onPage[at] != s) throw new IllegalStateException("span missing from page " + page);
            onPage[at] = n;
        }

        void remove(long page, Span<V> s) {
            Span<V>[] old = byPage.get(page);
            if (old == null) return;
            int at = indexOf(old, s.start());
            if (at < 0 || old[at] != s) return;
            if (old.length == 1) {
                byPage.remove(page);
            } else {
                Span<V>[] shrunk = Arrays.copyOf(old, old.length - 1);
                System.arraycopy(old, at + 1, shrunk, at, old.length - at - 1);
                byPage.put(page, shrunk);
            }
        }

        void clear() {
            byPage = new LongMap<>();
        }

        /**
         * Where the span starting at {@code start} is in {@code onPage} (a page of small blocks holds a hundred
         * and more), or {@code -(insertion point) - 1}.
         */
        private static <V> int indexOf(Span<V>[] onPage, long start) {
            int lo = 0;
            int hi = onPage.length - 1;
            while (lo <= hi) {
                int mid = (lo + hi) >>> 1;
                long m = onPage[mid].start();
                if (m < start) lo = mid + 1;
                else if (m > start) hi = mid - 1;
                else return mid;
            }
            return -lo - 1;
        }
    }
}
