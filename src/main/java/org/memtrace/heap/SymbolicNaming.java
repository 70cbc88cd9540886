package org.memtrace.heap;

import org.memtrace.event.Event;
import org.memtrace.symbols.AddressSpace;
import org.memtrace.symbols.Intervals;
import org.memtrace.trace.Naming;

/**
 * Names addresses the way the MadT symbolic lines do, by combining the address space (modules, symbols,
 * regions) with the dynamic memory tracker. A data address is named, in this order, by the heap block
 * that most recently covered it, by a global or static variable, by its region ({@code [heap]+off}), and
 * as a bare hexadecimal number when memtrace knows nothing about it.
 */
public final class SymbolicNaming implements Naming {

    /** The region name of an address no event described. */
    public static final String UNKNOWN_REGION = "[unknown]";
    /** The block name of an allocation event that created and released nothing (a failure, free(NULL)). */
    public static final String NO_BLOCK = Naming.NO_BLOCK;

    private final AddressSpace space;
    private final HeapTracker heap;
    private Event.Alloc lastAllocation;
    /** Whether the last event observed was an allocator call, whose changes the heap tracker knows. */
    private boolean lastWasAllocation;
    private Block lastBlock;
    /** A writer asks for region and data of the same address in a row: remember the last heap lookup. */
    private long lookedUp;
    private Block lookedUpBlock;
    private boolean lookupValid;

    public SymbolicNaming(AddressSpace space) {
        this.space = space;
        this.heap = new HeapTracker(space::code, new StackFrames(space));
    }

    /** Symbols from the installed files, separate debug files from /usr/lib/debug. */
    public SymbolicNaming() {
        this(new AddressSpace());
    }

    public AddressSpace addressSpace() {
        return space;
    }

    @Override
    public void observe(Event event) {
        lookupValid = false;
        lastWasAllocation = event instanceof Event.Alloc;
        switch (event) {
            case Event.Alloc a -> {
                lastAllocation = a;
                lastBlock = heap.observe(a);
            }
            default -> space.observe(event);
        }
    }

    /** An allocator call changes the heap tracker's pieces alone, and names only where they lie. */
    @Override
    public boolean changedByAllocation(Ranges to) {
        if (!lastWasAllocation) return false;
        heap.changed(to);
        return true;
    }

    /** {@code [heap]} for malloc-family blocks (also those glibc placed in mmapped chunks), else the address space's region. */
    @Override
    public String region(long address) {
        Block b = blockAt(address);
        if (b != null && !b.kind().isMapping()) return "[heap]";
        AddressSpace.Region r = space.region(address);
        if (r != null) return r.name();
        return b != null ? "[anon]" : UNKNOWN_REGION;
    }

    /** The object's name with the field and index path of a typed global ({@code table[3].value+0}). */
    @Override
    public String data(long address) {
        return data(address, true);
    }

    /** The object and the offset in it, without fields ({@code table+40}): what per-object statistics group by. */
    @Override
    public String object(long address) {
        return data(address, false);
    }

    private String data(long address, boolean fields) {
        Block b = blockAt(address);
        if (b != null) return b.name() + '+' + (address - b.start());
        String object = fields ? space.variable(address) : space.object(address);
        if (object != null) return object;
        AddressSpace.Region r = space.region(address);
        if (r != null) return r.name() + '+' + (address - r.start());
        return "0x" + Long.toHexString(address);
    }

    /**
     * A heap block's piece (within its region, for a mapped block), a module's global without a DWARF type or
     * the module between globals, or the stretch of a region between blocks; for a typed global (its bytes
     * are named by field and index) a span without a base over the global ({@link Span#named}); null where
     * {@link #data} would print a bare number or {@link #region} {@code [anon]} for want of a region.
     */
    @Override
    public Span span(long address) {
        Intervals.Span<Block> piece = heap.pieceAt(address);
        if (piece != null) {
            Block b = piece.value();
            if (!b.kind().isMapping()) return new Span(b.name(), b.start(), piece.start(), piece.end(), "[heap]");
            AddressSpace.RegionSpan r = space.regionSpan(address);
            if (r == null) return null;
            return new Span(b.name(), b.start(), Math.max(piece.start(), r.start()), Math.min(piece.end(), r.end()), r.region().name());
        }
        if (space.inModule(address)) {
            AddressSpace.ObjectSpan o = space.moduleSpan(address);
            return o == null ? null : new Span(o.base(), o.origin(), o.start(), o.end(), o.region().name());
        }
        AddressSpace.RegionSpan r = space.regionSpan(address);
        if (r == null) return null;
        long start = Math.max(r.start(), heap.gapStart(address)), end = Math.min(r.end(), heap.gapEnd(address));
        return new Span(r.region().name(), r.region().start(), start, end, r.region().name());
    }

    /**
     * Inside a heap block, up to the end of the block's piece (and of the region, for a mapped block, whose
     * region is the mapping's); elsewhere unknown: a global or a region's name can change at any symbol.
     */
    @Override
    public long sameObjectUntil(long address) {
        Block b = blockAt(address);
        if (b == null) return address + 1;
        long end = heap.pieceEnd(address);
        if (b.kind().isMapping()) {
            AddressSpace.Region r = space.region(address);
            if (r == null) return address + 1;
            end = Math.min(end, r.end());
        }
        return end;
    }

    private Block blockAt(long address) {
        if (lookupValid && address == lookedUp) return lookedUpBlock;
        lookedUpBlock = heap.blockAt(address);
        lookedUp = address;
        lookupValid = true;
        return lookedUpBlock;
    }

    @Override
    public String code(long ip) {
        return space.code(ip);
    }

    /** The inlined functions at the call, then the function it lies in; see {@link AddressSpace#frames}. */
    @Override
    public java.util.List<String> frames(long returnAddress) {
        return space.frames(returnAddress);
    }

    /** The line the module's DWARF line table gives for the instruction; see {@link AddressSpace#source}. */
    @Override
    public String source(long ip) {
        return space.source(ip);
    }

    /** Where a source file lies; see {@link AddressSpace#sourceLocation}. */
    @Override
    public String sourceLocation(String file) {
        return space.sourceLocation(file);
    }

    /** The line, or the inlined calls' frames at the instruction; see {@link AddressSpace#inlinedSource}. */
    @Override
    public String inlinedSource(long ip) {
        return space.inlinedSource(ip);
    }

    /** The access's stack as far as it can be trusted, by the rule of allocation stacks (StackFrames). */
    @Override
    public long[] accessStack(long ip, long[] callers) {
        return heap.stacks().of(ip, callers);
    }

    /** The call's stack as far as it can be trusted (StackFrames); for the event just observed. */
    @Override
    public long[] stack(Event.Alloc allocation) {
        return allocation == lastAllocation ? heap.stack() : Naming.super.stack(allocation);
    }

    /**
     * The name of the block the event created; for free, munmap and realloc to size 0 the released name of
     * the block it released; {@link #NO_BLOCK} when it did neither. Meant for the event just observed: for
     * an older event the block now at its result address is named.
     */
    @Override
    public String block(Event.Alloc allocation) {
        if (allocation == lastAllocation) return lastBlock == null ? NO_BLOCK : lastBlock.name();
        Block b = heap.blockAt(allocation.result());
        return b != null && b.start() == allocation.result() ? b.name() : NO_BLOCK;
    }
}
