package org.memtrace.report;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.TreeMap;
import org.memtrace.analysis.Access;
import org.memtrace.analysis.Allocation;
import org.memtrace.analysis.Stack;
import org.memtrace.analysis.Analysis;
import org.memtrace.analysis.BlockChunks;
import org.memtrace.analysis.DataName;
import org.memtrace.analysis.FreedMemory;
import org.memtrace.analysis.HeapTotals;
import org.memtrace.event.Event;
import org.memtrace.heap.Block;
import org.memtrace.trace.Naming;

/**
 * What {@code memtrace report} shows, aggregated while the trace streams by: counts per page, per
 * instruction, per object (heap block, global, region) and per allocation site, a time x offset grid per
 * object, and every access to freed memory (the first {@link #FREED_ROWS} in full). Memory stays bounded by
 * the program's footprint (pages, instructions, live blocks), not by the trace's length: released blocks
 * that a later allocation replaced survive only when they are among the {@link #RETIRED_KEPT} most accessed.
 */
public final class ReportAnalysis implements Analysis {
    static final int FREED_ROWS = 1000;
    static final int RETIRED_KEPT = 1000;
    /** Grids are given out on an object's first access while fewer than this many exist (16 KiB each). */
    static final int MAX_GRIDS = 1024;
    private static final int PAGE_SHIFT = 12;
    private static final int LINE = 64;
    private static final int SLOTS = 1 << 12;

    private final Naming naming;
    private final LongCounts pages = new LongCounts();
    private final LongCounts instructions = new LongCounts();
    /** Heap blocks by start, live and released, until an allocation covers them again. */
    private final TreeMap<Long, Obj> heap = new TreeMap<>();
    /**
     * Objects the naming names (globals, regions, parts of blocks the heap table no longer holds) by name and
     * start: two objects never share a record, even when they share a name (two {@code [anon]} mappings).
     */
    private final Map<Key, Obj> named = new HashMap<>();
    /**
     * The object of each address named before, direct-mapped, valid for one {@link #generation}: every
     * access goes to the object the trace names (docs/report.md), so nothing is guessed from neighbours.
     */
    private final long[] slotAddress = new long[SLOTS];
    private final int[] slotGeneration = new int[SLOTS];
    private final Obj[] slotObj = new Obj[SLOTS];
    /** Starts at 1: the slots' zeros are stale. Moves on whenever names may change (allocator calls, modules). */
    private int generation = 1;
    private final Map<String, Site> sites = new HashMap<>();
    private final PriorityQueue<Obj> retired = new PriorityQueue<>(Comparator.comparingLong(Obj::accesses));
    private final List<FreedAccess> freedAccesses = new ArrayList<>();
    /** Freed memory and the accesses to it that count, by the summary's rule too. */
    private final FreedMemory<Obj, FreedAccess> freed = new FreedMemory<>(ReportAnalysis::freedAccess, f -> {
        if (this.freedAccessCount++ < FREED_ROWS) this.freedAccesses.add(f);
    });
    private final Obj unknown = new Obj("[unknown]", Kind.UNKNOWN, null, 0, 0, -1);
    private long freedAccessCount, accesses, blockOperations;
    private int grids;
    private Obj last;
    private long lastStart, lastEnd;

    /**
     * What an object is: a heap block (a block the heap table no longer holds too: {@code <freed:…>}), a
     * module's global, a thread's stack, another region the naming names by itself ({@code [anon]},
     * {@code [heap]}, {@code [vdso]}), or nothing named.
     */
    enum Kind {
        HEAP, GLOBAL, STACK, REGION, UNKNOWN;

        /** The kind of an object the naming names {@code symbol}: regions are bracketed, blocks angled. */
        static Kind named(String symbol) {
            if (symbol.startsWith("[stack")) return STACK;
            if (symbol.startsWith("[")) return REGION;
            return symbol.startsWith("<") ? HEAP : GLOBAL;
        }
    }

    /** One object of the report: {@code size} 0 when unknown, {@code freed} -1 while live. */
    static final class Obj {
        final String name;
        final Kind kind;
        final Site site;
        final long start, size, allocated;
        long freed = -1, loads, stores;
        /** A heap block's bytes as its site counts them: the bytes asked for (its {@code size} is what it spans). */
        long counted;
        String freeSite, releasedName;
        /** The allocation's and the release's stacks (docs/stacks.md); the call site alone at depth 1. */
        Stack stack, freeStack;
        Grid grid;

        Obj(String name, Kind kind, Site site, long start, long size, long allocated) {
            this.name = name;
            this.kind = kind;
            this.site = site;
            this.start = start;
            this.size = size;
            this.allocated = allocated;
        }

        long accesses() { return loads + stores; }
    }

    /** DHAT's per-site view: blocks and bytes allocated, the most live at once, bytes read and written. */
    static final class Site {
        final String name;
        /** The program point's stack when stacks are deeper than the site; null at depth 1. */
        Stack stack;
        long blocks, bytes, live, maxLive, readBytes, writtenBytes;

        Site(String name) { this.name = name; }
    }

    private record Key(String name, long start) {}

    /** One access to released memory: what ran, where, and the block's history. */
    record FreedAccess(long sequence, boolean store, long ip, String block, long offset, String allocationSite, String freeSite,
                       Stack allocationStack, Stack freeStack, Stack accessStack) {}

    public ReportAnalysis(Naming naming) {
        this.naming = naming;
    }

    @Override
    public void access(Access t) {
        accesses++;
        freed.access(t);
        long sequence = t.sequence();
        long address = t.address();
        boolean store = t.store();
        pages.add(address >>> PAGE_SHIFT, 1, store);
        instructions.add(t.ip(), 1, store);
        Obj o = (last != null && address >= lastStart && address < lastEnd) ? last : find(t);
        if (store) o.stores++;
        else o.loads++;
        if (o.kind == Kind.UNKNOWN) return;
        long offset = address - o.start;
        if (o.site != null) {
            if (store) o.site.writtenBytes += t.size();
            else o.site.readBytes += t.size();
        }
        if (o.grid == null && grids < MAX_GRIDS) {
            o.grid = new Grid(sequence, o.size);
            grids++;
        }
        if (o.grid != null) o.grid.add(sequence, offset, store);
    }

    /** The row of an access to freed block {@code o} (null: a block the naming does not name, so the trace's name). */
    private static FreedAccess freedAccess(Access t, Obj o) {
        if (o == null || o.releasedName == null) {
            DataName d = DataName.of(t.object());
            return new FreedAccess(t.sequence(), t.store(), t.ip(), d.symbol(), d.offset(), o == null ? null : o.site.name, null,
                    o == null ? null : o.stack, null, t.stack());
        }
        return new FreedAccess(t.sequence(), t.store(), t.ip(), o.releasedName, t.address() - o.start, o.site.name, o.freeSite,
                o.stack, o.freeStack, t.stack());
    }

    /**
     * The object holding the access's address: the heap block of the table covering it (the newest there,
     * since a new block retires those it overlaps, as the naming's most recent block wins), else the object
     * the trace names there ({@link Naming#object}), by name and start. Remembered by address, and a heap
     * block for its extent.
     */
    private Obj find(Access t) {
        long address = t.address();
        Map.Entry<Long, Obj> h = heap.floorEntry(address);
        if (h != null && address < h.getKey() + Math.max(1, h.getValue().size)) {
            remember(h.getValue(), h.getKey(), h.getKey() + Math.max(1, h.getValue().size));
            return h.getValue();
        }
        int slot = (int) ((address * 0x9E3779B97F4A7C15L) >>> 52);
        if (slotGeneration[slot] == generation && slotAddress[slot] == address) {
            remember(slotObj[slot], address, address + 1);
            return slotObj[slot];
        }
        DataName d = DataName.of(t.object());
        Obj o;
        if (d.symbol() == null) {
            o = unknown;
        } else {
            long start = address - d.offset();
            Obj block = heap.get(start);
            if (block != null && (d.symbol().equals(block.name) || d.symbol().equals(block.releasedName))) {
                o = block;
            } else {
                o = named.computeIfAbsent(new Key(d.symbol(), start), k -> new Obj(k.name(), Kind.named(k.name()), null, k.start(), 0, -1));
            }
        }
        slotGeneration[slot] = generation;
        slotAddress[slot] = address;
        slotObj[slot] = o;
        remember(o, address, address + 1);
        return o;
    }

    /** Names may differ from here on: no address keeps its object. */
    private void forgetNames() {
        last = null;
        if (++generation == Integer.MAX_VALUE) {
            java.util.Arrays.fill(slotGeneration, 0);
            generation = 1;
        }
    }

    private void remember(Obj o, long start, long end) {
        last = o;
        lastStart = start;
        lastEnd = end;
    }

    @Override
    public void block(long sequence, Event.Block b) {
        blockOperations++;
        BlockChunks.expand(b, LINE, (address, size, write) -> {
            pages.add(address >>> PAGE_SHIFT, 1, write);
            // memset/memcpy into a block is reading or writing it, as DHAT counts; a chunk may run past the block's end
            Map.Entry<Long, Obj> e = heap.floorEntry(address);
            if (e == null || address - e.getKey() >= e.getValue().size) return;
            long bytes = Math.min(size, e.getKey() + e.getValue().size - address);
            if (write) e.getValue().site.writtenBytes += bytes;
            else e.getValue().site.readBytes += bytes;
        });
    }

    @Override
    public void namesChanged() {
        // a module or mapping came or went: names of globals and regions may differ from here on
        forgetNames();
    }

    @Override
    public void allocation(Allocation allocation) {
        forgetNames();
        long sequence = allocation.sequence();
        Event.Alloc a = allocation.event();
        String block = allocation.block();
        String site = naming.code(a.caller());
        Obj allocated = null;
        switch (a.function()) {
            case FREE -> release(a.arg(0), a.arg(0) + 1, sequence, site, allocation.stack());
            case MUNMAP -> {
                if (a.result() == 0) release(a.arg(0), a.arg(0) + a.arg(1), sequence, site, allocation.stack());
            }
            case REALLOC, REALLOCARRAY, MREMAP -> {
                if (a.result() != 0 && a.result() != -1 && a.arg(0) != 0) release(a.arg(0), a.arg(0) + 1, sequence, site, allocation.stack());
                allocated = allocate(sequence, a, block, allocation.stack());
            }
            default -> allocated = allocate(sequence, a, block, allocation.stack());
        }
        // after the release above: the block's release site and name are set when its freed accesses are
        freed.allocation(a, allocated);
    }

    /** The new heap object, or null when the call allocated nothing the naming names. */
    private Obj allocate(long sequence, Event.Alloc a, String block, Stack stack) {
        if (a.result() == 0 || a.result() == -1 || Naming.NO_BLOCK.equals(block)) return null;
        // the block's extent as the naming gives it: usable bytes, else (none reported) the naming's own extent
        long start = a.result(), size = a.usable() > 0 ? a.usable() : Math.max(1, naming.sameObjectUntil(start) - start);
        // blocks this one covers again are no longer reachable by address
        Map.Entry<Long, Obj> before = heap.lowerEntry(start);
        if (before != null && before.getKey() + before.getValue().size > start) retire(heap.remove(before.getKey()));
        for (Obj o : new ArrayList<>(heap.subMap(start, start + size).values())) retire(heap.remove(o.start));
        // DHAT's program points: by the whole stack when there is more of it than the site
        boolean deep = stack.deep();
        String site = Block.site(block);
        Site s = sites.computeIfAbsent(deep ? site + "#" + stack.id() : site, k -> new Site(site));
        if (deep) s.stack = stack;
        // the site counts what was asked for, as DHAT and the heap totals do; the object spans what it got
        long requested = HeapTotals.requested(a), counted = requested > 0 ? requested : size;
        s.blocks++;
        s.bytes += counted;
        s.live += counted;
        s.maxLive = Math.max(s.maxLive, s.live);
        Obj o = new Obj(block, Kind.HEAP, s, start, size, sequence);
        o.counted = counted;
        o.stack = stack;
        heap.put(start, o);
        return o;
    }

    /** Marks released the blocks starting in [from, to): free names one start, munmap a range. */
    private void release(long from, long to, long sequence, String site, Stack stack) {
        for (Obj o : heap.subMap(from, to).values()) {
            if (o.freed >= 0) continue;
            o.freed = sequence;
            o.freeSite = site;
            o.freeStack = stack;
            o.releasedName = releasedName(o.name);
            o.site.live -= o.counted;
        }
    }

    private void retire(Obj o) {
        if (o.accesses() == 0) return;
        retired.add(o);
        if (retired.size() > RETIRED_KEPT) {
            Obj dropped = retired.poll();
            if (dropped.grid != null) {
                dropped.grid = null;
                grids--;
            }
        }
    }

    /** The name the trace gives the block once released ({@code <freed:…>}, {@code <unmap:…>}). */
    private static String releasedName(String name) {
        String prefix = name.startsWith("<memmap") || name.startsWith("<mremap") ? "<unmap:" : "<freed:";
        int digits = name.startsWith("<realloc") ? 8 : 7;
        return name.length() > digits ? prefix + name.substring(digits) : name;
    }

    // ---- results, read once the trace has ended ----

    long accesses() { return accesses; }

    long blockOperations() { return blockOperations; }

    LongCounts pages() { return pages; }

    long freedAccessCount() {
        freed.release();
        return freedAccessCount;
    }

    List<FreedAccess> freedAccesses() {
        freed.release();
        return freedAccesses;
    }

    /** The {@code n} objects with the most loads and stores, most first. */
    List<Obj> hottestObjects(int n) {
        List<Obj> all = new ArrayList<>(heap.values());
        all.addAll(retired);
        all.addAll(named.values());
        if (unknown.accesses() > 0) all.add(unknown);
        all.removeIf(o -> o.accesses() == 0);
        all.sort(Comparator.comparingLong(Obj::accesses).reversed().thenComparing(o -> o.name));
        return all.subList(0, Math.min(n, all.size()));
    }

    /** Instructions by loads and stores, named as the trace names them, with their source lines. */
    List<Map<String, Object>> hottestInstructions(int n) {
        List<long[]> all = new ArrayList<>();
        instructions.forEach((ip, r, w) -> all.add(new long[] {ip, r, w}));
        all.sort(Comparator.comparingLong((long[] c) -> c[1] + c[2]).reversed().thenComparingLong(c -> c[0]));
        List<Map<String, Object>> rows = new ArrayList<>();
        for (long[] c : all.subList(0, Math.min(n, all.size()))) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("ip", "0x" + Long.toHexString(c[0]));
            row.put("name", naming.code(c[0]));
            row.put("source", naming.inlinedSource(c[0]));
            row.put("loads", c[1]);
            row.put("stores", c[2]);
            rows.add(row);
        }
        return rows;
    }

    /** Allocation sites by bytes allocated. */
    List<Site> sites(int n) {
        List<Site> all = new ArrayList<>(sites.values());
        all.sort(Comparator.comparingLong((Site s) -> s.bytes).reversed().thenComparing(s -> s.name));
        return all.subList(0, Math.min(n, all.size()));
    }

    /** Every program point (allocation site, or stack when deeper), in no order. */
    Collection<Site> allSites() { return sites.values(); }

    String code(long ip) { return naming.code(ip); }

    /** The access's line, or the frames of the calls inlined there ({@link Naming#inlinedSource}). */
    String source(long ip) { return naming.inlinedSource(ip); }
}
