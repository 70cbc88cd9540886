package org.memtrace.analysis;

import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.memtrace.event.Event;
import org.memtrace.symbols.Intervals;
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
 * nothing. An access hits freed memory when its first byte lies in a released malloc-family block that no
 * later allocation covered again: exactly where the naming prints {@code <freed:…>}.
 */
public final class HeapTotals implements Analysis {
    private static final long PAGE = 4096;

    /** A live block: what it counts (requested bytes) and what it spans (usable bytes, as the naming). */
    private record Live(long bytes, long extent, Stack stack) {}

    /** Per allocation stack: DHAT's program points. */
    private final ProgramPoints points = new ProgramPoints();

    private final LongMap<Live> live = new LongMap<>();
    /** Released malloc-family pieces not covered again: where the trace names {@code <freed:…>}. */
    private final Intervals<Boolean> freed = new Intervals<>();
    private long blocks, bytes, liveBlocks, liveBytes, temporaryBlocks, temporaryBytes;
    private long peakBytes, peakBlocks, peakSequence = -1;
    private String peakBlock;
    /** The block allocated by the last allocator call, 0 after any other call (heaptrack's lastAllocationPtr). */
    private long lastAllocated;
    private long freedAccesses, firstFreedSequence = -1;
    private String firstFreedAddress, firstFreedInstruction;
    /** The first access to freed memory as the summary names it. */
    private record First(long sequence, String address, String instruction) {}
    /** Leaves out the allocator's own accesses to its freed chunks. */
    private final FreedAccessFilter<First> filter = new FreedAccessFilter<>(f -> {
        if (freedAccesses++ == 0) {
            firstFreedSequence = f.sequence();
            firstFreedAddress = f.address();
            firstFreedInstruction = f.instruction();
        }
    });
    /**
     * Pages found clean (no freed piece on them) by the page's hash, valid while their stamp is the current
     * one: the next allocator call takes a new stamp. A run's accesses move between a few pages (the stack,
     * an arena, globals): one remembered page missed at nearly every access.
     */
    private static final int CLEAN_BITS = 10;
    private final long[] cleanPages = new long[1 << CLEAN_BITS];
    private final int[] cleanStamps = new int[1 << CLEAN_BITS];
    /** Starts at 1: the zeros of {@link #cleanStamps} are empty slots. */
    private int cleanStamp = 1;
    private boolean anyFreed;

    /** The totals as numbers and the names that go with them; {@code peakSequence} -1 when nothing was allocated. */
    public record Totals(long blocks, long bytes, long peakBytes, long peakBlocks, long peakSequence, String peakBlock,
                         long liveBlocks, long liveBytes, long temporaryBlocks, long temporaryBytes,
                         long freedAccesses, long firstFreedSequence, String firstFreedAddress, String firstFreedInstruction) {}

    public Totals totals() {
        filter.release();
        return new Totals(blocks, bytes, peakBytes, peakBlocks, peakSequence, peakBlock, liveBlocks, liveBytes,
                temporaryBlocks, temporaryBytes, freedAccesses, firstFreedSequence, firstFreedAddress, firstFreedInstruction);
    }

    @Override
    public String name() { return "heap totals"; }

    @Override
    public void access(Access access) {
        if (!anyFreed) return;
        long address = access.address();
        long page = address >>> 12;
        int slot = (int) ((page * 0x9E3779B97F4A7C15L) >>> 64 - CLEAN_BITS);
        if (cleanPages[slot] == page && cleanStamps[slot] == cleanStamp) return;
        if (freed.get(address) == null) {
            if (!freed.touchesPage(page)) {
                cleanPages[slot] = page;
                cleanStamps[slot] = cleanStamp;
            }
            return;
        }
        filter.freed(access.code(), address, () -> new First(access.sequence(), access.data(), access.code()));
    }

    @Override
    public void allocation(Allocation allocation) {
        if (cleanStamp == Integer.MAX_VALUE) {
            java.util.Arrays.fill(cleanStamps, 0);
            cleanStamp = 0;
        }
        cleanStamp++;
        Event.Alloc a = allocation.event();
        long sequence = allocation.sequence();
        boolean allocates = a.function() != Event.AllocFunction.FREE && a.function() != Event.AllocFunction.MUNMAP
                && a.result() != 0 && a.result() != -1;
        long extent = a.usable() > 0 ? a.usable() : Math.max(1, requested(a));
        filter.allocatorCall(allocates ? a.result() : 0, allocates ? a.result() + extent : 0);
        switch (a.function()) {
            case FREE -> {
                // free(NULL) is no call at all for heaptrack; any other free ends the last block's chance to be temporary
                if (a.arg(0) == 0) return;
                release(a.arg(0));
                lastAllocated = 0;
            }
            case MUNMAP -> {}
            case MMAP, MREMAP -> {
                if (a.result() == 0 || a.result() == -1) return;
                long length = a.function() == Event.AllocFunction.MMAP ? a.arg(1) : a.arg(2);
                cover(a.result(), a.usable() > 0 ? a.usable() : Math.max(1, (length + PAGE - 1) & -PAGE));
            }
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
        long extent = a.usable() > 0 ? a.usable() : Math.max(1, requested);
        // a block we still thought live at this start is gone (a release the trace missed), as the naming reads it
        Live missed = live.remove(start);
        if (missed != null) {
            liveBlocks--;
            liveBytes -= missed.bytes();
            points.released(missed.stack(), missed.bytes());
        }
        cover(start, extent);
        live.put(start, new Live(requested, extent, stack));
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

    /** New memory over released pieces: their {@code <freed:…>} names end there. */
    private void cover(long start, long extent) {
        if (anyFreed) freed.remove(start, start + extent);
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
        freed.put(pointer, pointer + b.extent(), Boolean.TRUE);
        anyFreed = true;
    }

    /**
     * The summary's heap lines, DHAT's totals in heaptrack's words; nothing when the trace holds no heap
     * allocation and no access to freed memory. {@code atExit}: the trace reached the program's end, so what
     * is live is what the program never freed.
     */
    public void print(PrintWriter out, long events, boolean atExit) {
        filter.release();
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
        points.print(out);
    }

    /** Distinct allocation stacks of the malloc family so far (DHAT's program points). */
    public int programPoints() { return points.size(); }

    private static void line(PrintWriter out, String label, long blocks, long bytes, String more) {
        out.printf(Locale.ROOT, "    %-24s %,13d block%s %,15d bytes%s%n", label, blocks, blocks == 1 ? " " : "s", bytes, more);
    }

    /** The totals by name, for the JSON summary and the report's data; {@code events}: the trace's numbered events. */
    public Map<String, Object> json(long events, boolean atExit) {
        filter.release();
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
        if (freedAccesses > 0) {
            Map<String, Object> first = new LinkedHashMap<>();
            first.put("sequence", firstFreedSequence);
            first.put("address", firstFreedAddress);
            first.put("instruction", firstFreedInstruction);
            m.put("firstFreedMemoryAccess", first);
        }
        if (points.shown()) {
            m.put("programPoints", points.size());
            m.put("largestProgramPoints", points.json());
        }
        return m;
    }
}
