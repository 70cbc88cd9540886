package org.memtrace.heap;

import java.util.function.LongFunction;
import org.memtrace.event.Event;
import org.memtrace.symbols.Intervals;
import org.memtrace.symbols.LongMap;
import org.memtrace.trace.Naming;

/**
 * The dynamic memory tracker: follows the allocator events in stream order and knows, for any address, the
 * most recent block that covered it, live or released. Released blocks stay so that a use after free or
 * after munmap is named {@code <freed:…>} / {@code <unmap:…>}; a later block at the same address replaces
 * them there.
 *
 * <p>Readings (docs/naming.md): one counter numbers every successful allocating call from 1; a failed call
 * takes no number. realloc and mremap always forge a new name, also when the block stays in place; the old
 * block is released first, so the part of it that the new block no longer covers keeps the released old
 * name. A block spans the bytes the agent reports as usable (malloc_usable_size, page-rounded lengths).
 */
public final class HeapTracker {

    private static final long PAGE = 4096;
    private static final long MAP_FAILED = -1;

    private final LongFunction<String> sites;
    private final Intervals<Block> pieces = new Intervals<>();
    /** Live blocks of the malloc family by start address: what free and realloc look up. */
    private final LongMap<Block> live = new LongMap<>();
    private long counter;
    /**
     * The ranges the last event put pieces on, as start/end pairs: a block's names change only there, since
     * putting a piece leaves the rest of what it overlaps as it was. Two at most (realloc, mremap: the old
     * block released, the new one made).
     */
    private final long[] changed = new long[4];
    private int changedPairs;

    /** The stack of each allocator call and the frame of it that names its blocks. */
    public interface Stacks {
        /** The call's stack, innermost first; element 0 is the call site. */
        default long[] of(Event.Alloc a) { return of(a.caller(), a.callers()); }

        /**
         * The stack of a code address {@code first} (a call site, or an access's instruction) and the return
         * addresses recorded above it ({@link Event.Alloc#callers}, {@link Event.Context#callers}), innermost
         * first, as far as they are trusted; element 0 is {@code first}.
         */
        long[] of(long first, long[] callers);

        /** The frame of {@code stack} a block is named after. */
        long site(long[] stack);
    }

    /** The call site alone: {@code caller}, as before stacks. */
    public static final Stacks CALLERS = new Stacks() {
        @Override public long[] of(long first, long[] callers) { return new long[] {first}; }
        @Override public long site(long[] stack) { return stack[0]; }
    };

    private final Stacks stacks;

    /** How this tracker trusts recorded frames: access stacks go through it too. */
    public Stacks stacks() { return stacks; }
    /** The stack of the event being observed. */
    private long[] current;

    /** @param sites names a call site (the caller's return address) as {@code function+offset} */
    public HeapTracker(LongFunction<String> sites) {
        this(sites, CALLERS);
    }

    public HeapTracker(LongFunction<String> sites, Stacks stacks) {
        this.sites = sites;
        this.stacks = stacks;
    }

    /**
     * Applies one allocator event. Returns the block it created, or for free/munmap (and realloc to size 0)
     * the first block it released; null when it changed nothing (a failure, free(NULL), an unknown pointer).
     */
    public Block observe(Event.Alloc a) {
        changedPairs = 0;
        current = stacks.of(a);
        return switch (a.function()) {
            case FREE -> free(a.arg(0));
            case MUNMAP -> a.result() == 0 ? unmap(a.arg(0), a.arg(0) + pageUp(a.arg(1))) : null;
            case REALLOC -> reallocate(a, a.arg(0), a.arg(1), false);
            case REALLOCARRAY -> reallocate(a, a.arg(0), a.arg(1) * a.arg(2), Math.multiplyHigh(a.arg(1), a.arg(2)) != 0);
            case MREMAP -> remap(a);
            default -> failed(a) ? null : allocate(a, requested(a));
        };
    }

    /** The stack of the last event observed, innermost first (its call site alone at {@code --stack-depth 1}). */
    public long[] stack() {
        return current;
    }

    /** Hands {@code to} the ranges of addresses whose block the last {@link #observe} changed; none when it changed nothing. */
    public void changed(Naming.Ranges to) {
        for (int i = 0; i < changedPairs; i += 2) to.range(changed[i], changed[i + 1]);
    }

    /** The block, live or released, most recently covering {@code address}; null between blocks. */
    public Block blockAt(long address) {
        Intervals.Span<Block> s = pieces.get(address);
        return s == null ? null : s.value();
    }

    /** The piece of a block, live or released, covering {@code address} and the block; null between blocks. */
    public Intervals.Span<Block> pieceAt(long address) {
        return pieces.get(address);
    }

    /** Between blocks: where the gap around {@code address} begins and ends (see {@link Intervals#gapStart}). */
    long gapStart(long address) {
        return pieces.gapStart(address);
    }

    long gapEnd(long address) {
        return pieces.gapEnd(address);
    }

    /** The end of the piece of a block covering {@code address} (a newer block may cover the rest); 0 when none. */
    public long pieceEnd(long address) {
        Intervals.Span<Block> s = pieces.get(address);
        return s == null ? 0 : s.end();
    }

    /** Successful allocating calls so far: the number the last forged name carries. */
    public long allocations() {
        return counter;
    }

    public int liveBlocks() {
        return live.size();
    }

    private static boolean failed(Event.Alloc a) {
        return a.result() == 0 || a.result() == MAP_FAILED;
    }

    private static long requested(Event.Alloc a) {
        return switch (a.function()) {
            case MALLOC, VALLOC -> a.arg(0);
            case PVALLOC -> pageUp(a.arg(0));
            case CALLOC -> a.arg(0) * a.arg(1);
            case ALIGNED_ALLOC, MEMALIGN -> a.arg(1);
            case POSIX_MEMALIGN -> a.arg(2);
            case MMAP -> pageUp(a.arg(1));
            default -> throw new IllegalArgumentException(a.function() + " is not a plain allocation");
        };
    }

    private Block allocate(Event.Alloc a, long requested) {
        long extent = a.usable() > 0 ? a.usable() : Math.max(1, requested);
        BlockKind kind = BlockKind.of(a.function());
        Block b = Block.forge(kind, ++counter, sites.apply(stacks.site(current)), a.result(), a.result() + extent, current);
        // A block we still thought live is gone if new memory is handed out over it (a release we missed).
        // Commonly the memory is fresh or exactly one freed block's: no list of overlapping pieces is made.
        Intervals.Span<Block> same = pieces.get(b.start());
        if (same != null && same.start() == b.start() && same.end() == b.end()) {
            live.remove(same.value().start(), same.value());
        } else if (pieces.overlaps(b.start(), b.end())) {
            for (Intervals.Span<Block> s : pieces.overlapping(b.start(), b.end())) live.remove(s.value().start(), s.value());
        }
        pieces.put(b.start(), b.end(), b);
        touched(b.start(), b.end());
        if (!kind.isMapping()) live.put(b.start(), b);
        return b;
    }

    private Block free(long pointer) {
        Block b = live.remove(pointer);
        if (b == null) return null;
        releaseParts(b.start(), b.end(), b);
        return b.release(current);
    }

    /** glibc: realloc(p, 0) frees p and returns NULL; realloc(NULL, n) is malloc(n); a failure leaves p alone. */
    private Block reallocate(Event.Alloc a, long old, long size, boolean overflow) {
        if (a.result() == 0) {
            return old != 0 && size == 0 && !overflow ? free(old) : null;
        }
        if (old != 0) free(old);
        return allocate(a, size);
    }

    private Block remap(Event.Alloc a) {
        if (failed(a)) return null;
        long oldStart = a.arg(0);
        long oldSize = pageUp(a.arg(1));
        // An old size of 0 duplicates a shared mapping instead of moving it: the original stays.
        if (oldSize > 0) unmap(oldStart, oldStart + oldSize);
        return allocate(a, pageUp(a.arg(2)));
    }

    private Block unmap(long start, long end) {
        touched(start, end);
        Block first = null;
        for (Intervals.Span<Block> s : pieces.overlapping(start, end)) {
            Block b = s.value();
            if (b.released() || !b.kind().isMapping()) continue;
            pieces.put(Math.max(s.start(), start), Math.min(s.end(), end), b.release(current));
            if (first == null) first = b.release(current);
        }
        return first;
    }

    private void releaseParts(long start, long end, Block b) {
        touched(start, end);
        Block released = b.release(current);
        // The common case: the block is still one piece, untouched since it was made.
        Intervals.Span<Block> whole = pieces.get(start);
        if (whole != null && whole.value() == b && whole.start() == start && whole.end() == end) {
            pieces.replace(whole, released);
            return;
        }
        for (Intervals.Span<Block> s : pieces.overlapping(start, end)) {
            if (s.value() == b) pieces.put(s.start(), s.end(), released);
        }
    }

    private void touched(long start, long end) {
        changed[changedPairs++] = start;
        changed[changedPairs++] = end;
    }

    private static long pageUp(long n) {
        return (n + PAGE - 1) & -PAGE;
    }
}
