package org.memtrace.analysis;

import java.util.Arrays;
import org.memtrace.trace.Naming;

/**
 * Miss counts per object, keyed by a small int id per object name, the name resolved when the miss
 * happens. A miss must cost no name lookup in the common case (a walk over a heap array misses on every
 * line, at a new address each time), so an address finds its id through, in order: the recent spans of
 * addresses that {@link Naming#sameObjectUntil} says share one object (a heap block), then a direct-mapped
 * table of addresses named before. Both are valid only while names stay the same: {@link #namesChanged}
 * forgets them, never the ids or the counts.
 */
final class ObjectMisses {
    private static final int SPANS = 8;
    private static final int SLOTS = 1 << 12;

    private final Naming naming;
    private final Interner names = new Interner();
    private long[] firstLevel = new long[64], lastLevel = new long[64];

    /** [spanStart[i], spanEnd[i]) is named spanId[i]; {@code spans} of them are valid, {@code last} hit last. */
    private final long[] spanStart = new long[SPANS], spanEnd = new long[SPANS];
    private final int[] spanId = new int[SPANS];
    private int spans, last, nextOut;

    private final long[] slotAddress = new long[SLOTS];
    private final int[] slotGeneration = new int[SLOTS];
    private final int[] slotId = new int[SLOTS];
    /** Starts at 1: the slots' zeros are stale. */
    private int generation = 1;

    ObjectMisses(Naming naming) {
        this.naming = naming;
    }

    void add(long address, long l1, long ll) {
        int id = idAt(address);
        firstLevel[id] += l1;
        lastLevel[id] += ll;
    }

    /** Names may differ from here on. */
    void namesChanged() {
        generation++;
        spans = 0;
        last = 0;
    }

    /** Receives one object's counts. */
    @FunctionalInterface
    interface Visitor {
        void visit(String name, long firstLevel, long lastLevel);
    }

    void forEach(Visitor v) {
        for (int id = 0; id < names.size(); id++) v.visit(names.text(id), firstLevel[id], lastLevel[id]);
    }

    private int idAt(long address) {
        if (last < spans && address - spanStart[last] >= 0 && address - spanEnd[last] < 0) return spanId[last];
        for (int i = 0; i < spans; i++) {
            if (address - spanStart[i] >= 0 && address - spanEnd[i] < 0) {
                last = i;
                return spanId[i];
            }
        }
        int slot = (int) ((address * 0x9E3779B97F4A7C15L) >>> 52);
        if (slotGeneration[slot] == generation && slotAddress[slot] == address) return slotId[slot];
        int id = resolve(address);
        slotGeneration[slot] = generation;
        slotAddress[slot] = address;
        slotId[slot] = id;
        return id;
    }

    private int resolve(long address) {
        DataName name = DataName.of(naming.object(address));
        int id = intern(name.object());
        if (name.symbol() != null) {
            long until = naming.sameObjectUntil(address);
            if (until - address > 1) remember(address, until, id);
        }
        return id;
    }

    /** A span that ends where a known one of the same object ends only moves that one's start down. */
    private void remember(long start, long end, int id) {
        for (int i = 0; i < spans; i++) {
            if (spanEnd[i] == end && spanId[i] == id) {
                spanStart[i] = Math.min(spanStart[i], start);
                last = i;
                return;
            }
        }
        int i;
        if (spans < SPANS) {
            i = spans++;
        } else {
            i = nextOut;
            nextOut = (nextOut + 1) % SPANS;
        }
        spanStart[i] = start;
        spanEnd[i] = end;
        spanId[i] = id;
        last = i;
    }

    private int intern(String object) {
        int id = names.id(object);
        if (id == firstLevel.length) {
            firstLevel = Arrays.copyOf(firstLevel, 2 * id);
            lastLevel = Arrays.copyOf(lastLevel, 2 * id);
        }
        return id;
    }
}
