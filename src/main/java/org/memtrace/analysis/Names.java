package org.memtrace.analysis;

import java.util.Arrays;
import org.memtrace.trace.Naming;

/**
 * The naming behind a cache that every analysis shares: names are resolved only when an analysis asks, and
 * then once per data address and once per instruction until they can change. Data names can change with
 * any event that is not an access (an allocation, a release, a module); code names only with events that
 * are neither accesses nor allocator calls.
 *
 * <p>Invalidating must not cost in proportion to what the cache holds, and an allocator call must not
 * throw away the names of every other block (a heap-heavy program would re-resolve nearly every access).
 * So every slot carries the stamp of when it was filled, and an invalidation takes the next stamp: a whole
 * one (modules, mappings) is a single field, a range of addresses marks the 16-byte granules it covers in
 * a small table by the granule's hash. A data slot is valid while it is younger than both the
 * last whole invalidation and its granule's mark. Granules that share a mark only cost a lookup again.
 */
final class Names {
    private static final int DATA_SLOTS = 1 << 14;
    private static final int CODE_SLOTS = 1 << 12;
    /** Where a source line was looked up and there is none: null is a valid answer, so null can't mark "not yet". */
    private static final String NO_SOURCE = new String("(none)");
    /** malloc's alignment: a granule of 64 would hold four small blocks, and each one's allocation would drop the other three's names. */
    private static final int GRANULE_SHIFT = 4;
    /** Ranges up to 256 KiB are marked granule by granule; a larger one invalidates all data names (rare: large blocks). */
    private static final int GRANULES = 1 << 14, GRANULE_HASH_SHIFT = 64 - 14;

    private final Naming naming;
    private final AccessStacks accessStacks;
    private final long[] dataAddress = new long[DATA_SLOTS];
    private final int[] dataStamp = new int[DATA_SLOTS];
    /** The stamp of the last invalidation of each granule's addresses, by {@link #granule}. */
    private final int[] granuleStamp = new int[GRANULES];
    private final String[] region = new String[DATA_SLOTS];
    private final String[] data = new String[DATA_SLOTS];
    private final String[] object = new String[DATA_SLOTS];
    private final long[] codeAddress = new long[CODE_SLOTS];
    private final int[] codeGeneration = new int[CODE_SLOTS];
    private final String[] code = new String[CODE_SLOTS];
    private final String[] source = new String[CODE_SLOTS];
    /**
     * {@link Naming#span}s by the 64-byte line of the address they were asked for, valid as the data slots
     * are (stamped when filled); {@link #NO_SPAN} remembers that the line's address had none.
     */
    private final long[] spanLine = new long[DATA_SLOTS];
    private final int[] spanStamp = new int[DATA_SLOTS];
    private final Naming.Span[] spans = new Naming.Span[DATA_SLOTS];
    /** Behind them, by the address's 4 KiB page: a span over many lines is made once, not once per line. */
    private final long[] spanPage = new long[DATA_SLOTS];
    private final int[] pageSpanStamp = new int[DATA_SLOTS];
    private final Naming.Span[] pageSpans = new Naming.Span[DATA_SLOTS];
    private static final Naming.Span NO_SPAN = new Naming.Span("", 0, 0, 0, "");
    /** Start at 1: the arrays' zeros are stale. */
    private int stamp = 1, allDataStamp = 1, codeGen = 1;

    Names(Naming naming) {
        this.accessStacks = new AccessStacks(naming);
        this.naming = naming;
    }

    /** An allocator call was observed that may have changed any data name, code names not. */
    void heapChanged() {
        allDataStamp = nextStamp();
    }

    /** An allocator call was observed: the data names of [start, end) may differ from here on. */
    void dataChanged(long start, long end) {
        if (Long.compareUnsigned(end, start) <= 0) return;
        long first = start >>> GRANULE_SHIFT;
        long granules = ((end - 1) >>> GRANULE_SHIFT) - first + 1;
        if (granules >= GRANULES) {
            heapChanged();
            return;
        }
        int s = nextStamp();
        for (long g = first; g < first + granules; g++) granuleStamp[granule(g)] = s;
    }

    /** Anything else but an access was observed (a module, a mapping, an exec): all names may differ. */
    void allChanged() {
        heapChanged();
        codeGen++;
    }

    /** Stamps of 2^31 invalidations start over: every data slot and granule mark is cleared first. */
    private int nextStamp() {
        if (stamp == Integer.MAX_VALUE) {
            Arrays.fill(dataStamp, 0);
            Arrays.fill(spanStamp, 0);
            Arrays.fill(pageSpanStamp, 0);
            Arrays.fill(granuleStamp, 0);
            stamp = allDataStamp = 1;
        }
        return ++stamp;
    }

    /**
     * {@link Naming#span} of the address, or null: one lookup names every address of a heap block or of a
     * stretch of a region, where the names by address miss on every new offset.
     */
    Naming.Span span(long address) {
        long line = address >>> 6;
        int s = (int) ((line * 0x9E3779B97F4A7C15L) >>> 50);
        int mark = granuleStamp[granule(address >>> GRANULE_SHIFT)];
        Naming.Span span = spans[s];
        if (!current(span, spanLine[s] == line, spanStamp[s], mark, address)) {
            // the page's span, when it holds the address (a block or stretch larger than a line), else a new one
            long page = address >>> 12;
            int p = (int) ((page * 0x9E3779B97F4A7C15L) >>> 50);
            span = pageSpans[p];
            if (span == NO_SPAN || !current(span, spanPage[p] == page, pageSpanStamp[p], mark, address)) {
                span = naming.span(address);
                if (span == null) span = NO_SPAN;
                pageSpans[p] = span;
                spanPage[p] = page;
                pageSpanStamp[p] = stamp;
            }
            // the line keeps the span's own stamp: an address of the line renamed since it was made is not named by it
            spans[s] = span;
            spanLine[s] = line;
            spanStamp[s] = pageSpanStamp[p];
        }
        // a typed global's span says "none" for all of the global: its page slot keeps it, as any span
        return span == NO_SPAN || !span.named() ? null : span;
    }

    /** Whether a span kept for the address's line or page (when {@code key} matched) is valid for it, as {@link #dataSlot} checks. */
    private boolean current(Naming.Span span, boolean key, int filled, int mark, long address) {
        return span != null && key && filled >= allDataStamp && filled >= mark && (span == NO_SPAN || span.contains(address));
    }

    /** {@link Naming#region} */
    String region(long address) {
        int s = dataSlot(address);
        String r = region[s];
        if (r == null) region[s] = r = naming.region(address);
        return r;
    }

    /** {@link Naming#data} */
    String data(long address) {
        int s = dataSlot(address);
        String d = data[s];
        if (d == null) data[s] = d = naming.data(address);
        return d;
    }

    /** {@link Naming#object} */
    String object(long address) {
        int s = dataSlot(address);
        String o = object[s];
        if (o == null) object[s] = o = naming.object(address);
        return o;
    }

    /** {@link Naming#code} */
    String code(long ip) {
        int s = codeSlot(ip);
        String c = code[s];
        if (c == null) code[s] = c = naming.code(ip);
        return c;
    }

    /** {@link Naming#inlinedSource}: null when no line table covers the instruction. */
    String source(long ip) {
        int s = codeSlot(ip);
        String c = source[s];
        if (c == null) source[s] = c = nonNull(naming.inlinedSource(ip));
        return c == NO_SOURCE ? null : c;
    }

    private static String nonNull(String s) { return s == null ? NO_SOURCE : s; }

    private int dataSlot(long address) {
        int s = (int) ((address * 0x9E3779B97F4A7C15L) >>> 50);
        int filled = dataStamp[s];
        if (dataAddress[s] != address || filled < allDataStamp
                || filled < granuleStamp[granule(address >>> GRANULE_SHIFT)]) {
            dataStamp[s] = stamp;
            dataAddress[s] = address;
            region[s] = data[s] = object[s] = null;
        }
        return s;
    }

    /** Hashed, not the low bits: blocks and mappings at multiples of 256 KiB would all share one mark. */
    private static int granule(long number) {
        return (int) ((number * 0x9E3779B97F4A7C15L) >>> GRANULE_HASH_SHIFT);
    }

    private int codeSlot(long ip) {
        int s = (int) ((ip * 0x9E3779B97F4A7C15L) >>> 52);
        if (codeGeneration[s] != codeGen || codeAddress[s] != ip) {
            codeGeneration[s] = codeGen;
            codeAddress[s] = ip;
            code[s] = source[s] = null;
        }
        return s;
    }

    /** {@link AccessStacks#of}: one table for every analysis, so an access stack is named once. */
    Stack accessStack(long ip, long[] callers) {
        return accessStacks.of(ip, callers);
    }
}
