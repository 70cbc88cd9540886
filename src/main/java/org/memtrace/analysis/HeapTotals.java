package org.memtrace.analysis;

import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.memtrace.event.Event;
import org.memtrace.symbols.LongMap;

/**
 * The heap totals heaptrack and DHAT print, from the allocator calls in the trace: blocks and bytes
 * allocated, the peak of bytes live (when, and the allocation that reached it), what is live at the end
 * (not freed: no reachability is computed, so "leaked" is every block still allocated), temporary
 * allocations, and the loads and stores that hit freed memory (the {@code <freed:…>} names of the trace).
 *
 * <p>Readings, as in docs/analyses.md, "Heap totals": the malloc family only (malloc, calloc, realloc,
 * reallocarray, the aligned allocators; free), as DHAT and heaptrack count, not mmap; bytes as requested
 * (calloc: count × size), not the usable size. realloc releases the old block, then allocates the new one
 * (one more block). A block is temporary when the allocator call right after its allocation, any thread,
 * is its release (heaptrack's definition: no other allocation or free between; free(NULL), failed calls and
 * the mmap family do not count as calls between). A free of an address that
 * starts no live block (allocated before the trace, or by glibc where the wrappers do not see it) changes
 * nothing. Which accesses hit freed memory is {@link FreedMemory}'s rule, the report's too.
 */
public final class HeapTotals implements Analysis {
    private static final long PAGE = 4096;

    /** A live block: what it counts (requested bytes) and its program point. */
    private record Live(long bytes, Stack stack) {}

    /** Per allocation stack: DHAT's program points. */
    private final ProgramPoints points = new ProgramPoints();

    private final LongMap<Live> live = new LongMap<>();
    private long blocks, bytes, liveBlocks, liveBytes, temporaryBlocks, temporaryBytes;
    private long peakBytes, peakBlocks, peakSequence = -1;
    private String peakBlock;
    /** The block allocated by the last allocator call, 0 after any other call (heaptrack's lastAllocationPtr). */
    private long lastAllocated;
    private long freedAccesses, firstFreedSequence = -1;
    private String firstFreedAddress, firstFreedInstruction, firstFreedSource;
    /** The first access to freed memory's stack (docs/stacks.md, "Access stacks"), null when none was recorded. */
    private Stack firstFreedStack;
    private String whereCallersAre;
    /** The first access to freed memory as the summary names it. */
    private record First(long sequence, String address, String instruction, String source, Stack stack) {}
    /** Freed memory and the accesses to it that count, by the report's rule too. */
    private final FreedMemory<Boolean, First> freed = new FreedMemory<>(
            (access, block) -> new First(access.sequence(), access.data(), access.code(), access.source(), access.stack()), f -> {
        if (freedAccesses++ == 0) {
            firstFreedSequence = f.sequence();
            firstFreedAddress = f.address();
            firstFreedInstruction = f.instruction();
            firstFreedStack = f.stack();
            firstFreedSource = f.source();
        }
    });

    /** The totals as numbers and the names that go with them; {@code peakSequence} -1 when nothing was allocated. */
    public record Totals(long blocks, long bytes, long peakBytes, long peakBlocks, long peakSequence, String peakBlock,
                         long liveBlocks, long liveBytes, long temporaryBlocks, long temporaryBytes,
                         long freedAccesses, long firstFreedSequence, String firstFreedAddress, String firstFreedInstruction) {}

    public Totals totals() {
        freed.release();
        return new Totals(blocks, bytes, peakBytes, peakBlocks, peakSequence, peakBlock, liveBlocks, liveBytes,
                temporaryBlocks, temporaryBytes, freedAccesses, firstFreedSequence, firstFreedAddress, firstFreedInstruction);
    }

    @Override
    public String name() { return "heap totals"; }

    @Override
    public void access(Access access) {
        freed.access(access);
    }

    @Override
    public void allocation(Allocation allocation) {
        Event.Alloc a = allocation.event();
        long sequence = allocation.sequence();
        freed.allocation(a, Boolean.TRUE);
        switch (a.function()) {
            case FREE -> {
                // free(NULL) is no call at all for heaptrack; any other free ends the last block's chance to be temporary
                if (a.arg(0) == 0) return;
                release(a.arg(0));
                lastAllocated = 0;
            }
            case MUNMAP, MMAP, MREMAP -> {}
            case REALLOC, REALLOCARRAY -> {
                long size = a.function() == Event.AllocFunction.REALLOC ? a.arg(1) : a.arg(1) * a.arg(2);
                boolean overflow = a.function() == Event.AllocFunction.REALLOCARRAY && Math.multiplyHigh(a.arg(1), a.arg(2)) != 0;
                // glibc: realloc(p, 0) frees p and returns NULL; a failure leaves p alone
                if (a.result() == 0) {
                    if (a.arg(0) != 0 && size == 0 && !overflow) {
                        release(a.arg(0));
                        lastAllocated = 0;
                    }
                    return;
                }
                if (a.arg(0) != 0) release(a.arg(0));
                allocate(sequence, a, size, allocation.block(), allocation.stack());
            }
            default -> {
                if (a.result() == 0) return;   // a failed call allocates nothing, as heaptrack records nothing
                allocate(sequence, a, requested(a), allocation.block(), allocation.stack());
            }
        }
    }

    /** The bytes the call asked for (a mapping's length; 0 for a release): what DHAT and heaptrack count. */
    public static long requested(Event.Alloc a) {
        return switch (a.function()) {
            case MALLOC, VALLOC -> a.arg(0);
            case PVALLOC -> (a.arg(0) + PAGE - 1) & -PAGE;
            case CALLOC -> a.arg(0) * a.arg(1);
            case ALIGNED_ALLOC, MEMALIGN, REALLOC, MMAP -> a.arg(1);
            case POSIX_MEMALIGN, MREMAP -> a.arg(2);
            case REALLOCARRAY -> a.arg(1) * a.arg(2);
            case FREE, MUNMAP -> 0;
        };
    }

    private void allocate(long sequence, Event.Alloc a, long requested, String block, Stack stack) {
        long start = a.result();
        // a block we still thought live at this start is gone (a release the trace missed), as the naming reads it
        Live missed = live.remove(start);
        if (missed != null) {
            liveBlocks--;
            liveBytes -= missed.bytes();
            points.released(missed.stack(), missed.bytes());
        }
        live.put(start, new Live(requested, stack));
        points.allocated(stack, requested);
        blocks++;
        bytes += requested;
        liveBlocks++;
        liveBytes += requested;
        if (liveBytes > peakBytes) {
            peakBytes = liveBytes;
            peakBlocks = liveBlocks;
            peakSequence = sequence;
            peakBlock = block;
        }
        lastAllocated = start;
    }

    private void release(long pointer) {
        Live b = live.remove(pointer);
        if (b == null) return;
        if (pointer == lastAllocated) {
            temporaryBlocks++;
            temporaryBytes += b.bytes();
        }
        liveBlocks--;
        liveBytes -= b.bytes();
        points.released(b.stack(), b.bytes());
    }

    /**
     * The summary's heap lines, DHAT's totals in heaptrack's words; nothing when the trace holds no heap
     * allocation and no access to freed memory. {@code atExit}: the trace reached the program's end, so what
     * is live is what the program never freed.
     */
    /**
     * The trace came from probes (rewrite mode, a {@code memtrace cc} program), which record no callers of an
     * access: the summary then says where the first use after free's callers can be had ({@code
     * whereCallersAre}, a phrase of the summary's line).
     */
    public void fromProbes(String whereCallersAre) { this.whereCallersAre = whereCallersAre; }

    public void print(PrintWriter out, long events, boolean atExit) {
        freed.release();
        if (blocks == 0 && freedAccesses == 0) return;
        out.println("  heap (malloc family, bytes as requested)");
        line(out, "allocated", blocks, bytes, "");
        line(out, "peak live", peakBlocks, peakBytes, peakSequence < 0 ? "" : String.format(Locale.ROOT,
                "  at event %,d%s, reached by %s", peakSequence,
                events > 0 ? String.format(Locale.ROOT, " of %,d (%.0f %%)", events, 100.0 * peakSequence / events) : "", peakBlock));
        line(out, atExit ? "live at exit (not freed)" : "live at end (not freed)", liveBlocks, liveBytes, "");
        line(out, "temporary", temporaryBlocks, temporaryBytes, "  (freed by the next allocator call)");
        out.printf(Locale.ROOT, "    %-24s %,13d %s%n", "use after free", freedAccesses, freedAccesses == 0 ? "accesses to freed memory"
                : String.format(Locale.ROOT, "access%s to freed memory, the first at event %,d: %s by %s", freedAccesses == 1 ? "" : "es",
                        firstFreedSequence, firstFreedAddress, firstFreedInstruction));
        if (firstFreedStack != null && firstFreedStack.deep())
            for (String frame : firstFreedStack.names()) out.printf(Locale.ROOT, "      at %s%n", frame);
        else if (whereCallersAre != null && firstFreedSource != null)
            // a probe's access has no stack or one frame only (docs/stacks.md, "Access stacks"): its line, and where
            // its callers are recorded
            out.printf(Locale.ROOT, "      at %s(%s)  (its callers: %s)%n", firstFreedInstruction, firstFreedSource, whereCallersAre);
        // glibc's vector string code reads whole aligned vectors past a string's end (FreedMemory): harmless, said apart
        if (freed.overReads() > 0)
            out.printf(Locale.ROOT, "    %-24s %,13d load%s of freed memory past a string's end by libc's vector string code "
                    + "(harmless: within the aligned vectors the string ends in; not a use after free)%n",
                    "read past a string's end", freed.overReads(), freed.overReads() == 1 ? "" : "s");
        points.print(out);
    }

    /** Distinct allocation stacks of the malloc family so far (DHAT's program points). */
    public int programPoints() { return points.size(); }

    private static void line(PrintWriter out, String label, long blocks, long bytes, String more) {
        out.printf(Locale.ROOT, "    %-24s %,13d block%s %,15d bytes%s%n", label, blocks, blocks == 1 ? " " : "s", bytes, more);
    }

    /** The totals by name, for the JSON summary and the report's data; {@code events}: the trace's numbered events. */
    public Map<String, Object> json(long events, boolean atExit) {
        freed.release();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("allocatedBlocks", blocks);
        m.put("allocatedBytes", bytes);
        m.put("peakLiveBytes", peakBytes);
        m.put("peakLiveBlocks", peakBlocks);
        m.put("peakSequence", peakSequence < 0 ? null : peakSequence);
        m.put("peakFractionOfTrace", peakSequence < 0 || events == 0 ? null : (double) peakSequence / events);
        m.put("peakReachedBy", peakBlock);
        m.put("liveBlocksAtEnd", liveBlocks);
        m.put("liveBytesAtEnd", liveBytes);
        m.put("endIsExit", atExit);
        m.put("temporaryBlocks", temporaryBlocks);
        m.put("temporaryBytes", temporaryBytes);
        m.put("freedMemoryAccesses", freedAccesses);
        m.put("stringOverReads", freed.overReads());
        if (freedAccesses > 0) {
            Map<String, Object> first = new LinkedHashMap<>();
            first.put("sequence", firstFreedSequence);
            first.put("address", firstFreedAddress);
            first.put("instruction", firstFreedInstruction);
            if (firstFreedStack != null && firstFreedStack.deep()) first.put("stack", firstFreedStack.names());
            m.put("firstFreedMemoryAccess", first);
        }
        if (points.shown()) {
            m.put("programPoints", points.size());
            m.put("largestProgramPoints", points.json());
        }
        return m;
    }
}
