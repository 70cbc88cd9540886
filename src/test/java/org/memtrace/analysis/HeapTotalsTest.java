package org.memtrace.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.memtrace.event.Event;
import org.memtrace.heap.SymbolicNaming;
import org.memtrace.trace.InstructionShapes;

/** Heap totals from hand-made allocator events and accesses, through the stage as every command runs them (lines numbered from 0). */
class HeapTotalsTest {
    private final HeapTotals heap = new HeapTotals();
    private final Interpretation in = new Interpretation(new SymbolicNaming(), ip -> new InstructionShapes.Shape(8, false), List.of(heap));

    private static Event.Alloc alloc(Event.AllocFunction f, long result, long usable, long... args) {
        long[] a = new long[6];
        System.arraycopy(args, 0, a, 0, args.length);
        return new Event.Alloc(1, f, 0x401000, result, usable, a);
    }

    private void load(long address) {
        in.accept(new Event.Access(1, 0x401100, address, false, false));
    }

    @Test
    void countsBlocksPeakEndTemporaryAndFreedAccesses() {
        in.accept(alloc(Event.AllocFunction.MALLOC, 0x500000, 104, 100));             // 0: 100 live
        in.accept(alloc(Event.AllocFunction.MALLOC, 0x500100, 200, 200));             // 1: 300 live, peak
        load(0x500100);                                                                // 2: live block
        in.accept(alloc(Event.AllocFunction.FREE, 0, 0, 0x500100));                   // 3: 100 live; temporary: no call since its malloc (the load is none)
        load(0x500108);                                                                // 4: use after free
        in.accept(alloc(Event.AllocFunction.FREE, 0, 0, 0));                          // free(NULL): no line, no call between
        in.accept(alloc(Event.AllocFunction.MALLOC, 0, 0, 1L << 50));                 // 5: failed, allocates nothing
        in.accept(alloc(Event.AllocFunction.MALLOC, 0x500100, 24, 16));               // 6: over the freed block's first 24 bytes
        load(0x500100);                                                                // 7: the new block
        load(0x500120);                                                                // 8: still the freed one
        in.accept(alloc(Event.AllocFunction.FREE, 0, 0, 0x500100));                   // 9: temporary (16 bytes)
        in.accept(alloc(Event.AllocFunction.MMAP, 0x7f0000000000L, 0, 0, 8192));      // 10: not the malloc family
        in.accept(alloc(Event.AllocFunction.REALLOC, 0x600000, 312, 0x500000, 300));  // 11: 100 released, 300 live (= peak, not above)
        in.accept(alloc(Event.AllocFunction.FREE, 0, 0, 0x123456));                   // 12: starts no block
        in.accept(alloc(Event.AllocFunction.CALLOC, 0x700000, 112, 4, 25));           // 13: 400 live, the peak; the naming numbers the mmap too: 0006
        load(0x700000);                                                                // 14
        in.finish(Ending.offline(15, in.events(), 0, java.util.Map.of()));

        HeapTotals.Totals t = heap.totals();
        assertThat(t.blocks()).isEqualTo(5);
        assertThat(t.bytes()).isEqualTo(100 + 200 + 16 + 300 + 100);
        assertThat(t.peakBytes()).isEqualTo(400);
        assertThat(t.peakBlocks()).isEqualTo(2);
        assertThat(t.peakSequence()).isEqualTo(13);
        assertThat(t.peakBlock()).startsWith("<calloc0006@");
        assertThat(t.liveBlocks()).isEqualTo(2);
        assertThat(t.liveBytes()).isEqualTo(400);
        assertThat(t.temporaryBlocks()).isEqualTo(2);
        assertThat(t.temporaryBytes()).isEqualTo(216);
        assertThat(t.freedAccesses()).isEqualTo(2);
        assertThat(t.firstFreedSequence()).isEqualTo(4);
        assertThat(t.firstFreedAddress()).startsWith("<freed:0002@").endsWith(">+8");

        StringWriter text = new StringWriter();
        heap.print(new PrintWriter(text, true), 15, true);
        String site = t.peakBlock().substring("<calloc0006@".length(), t.peakBlock().length() - 1);
        assertThat(text.toString()).isEqualTo(String.join("\n",
                "  heap (malloc family, bytes as requested)",
                "    allocated                            5 blocks             716 bytes",
                "    peak live                            2 blocks             400 bytes  at event 13 of 15 (87 %), reached by <calloc0006@" + site + ">",
                "    live at exit (not freed)             2 blocks             400 bytes",
                "    temporary                            2 blocks             216 bytes  (freed by the next allocator call)",
                "    use after free                       2 accesses to freed memory, the first at event 4: " + t.firstFreedAddress()
                        + " by " + t.firstFreedInstruction(),
                ""));
    }

    @Test
    void reallocOfTheBlockJustAllocatedMakesItTemporaryAndReallocToZeroFrees() {
        in.accept(alloc(Event.AllocFunction.MALLOC, 0x500000, 24, 10));
        in.accept(alloc(Event.AllocFunction.REALLOC, 0x500100, 40, 0x500000, 40));   // heaptrack: free then malloc
        in.accept(alloc(Event.AllocFunction.REALLOC, 0, 0, 0x500100, 0));            // glibc: frees, returns NULL
        HeapTotals.Totals t = heap.totals();
        assertThat(t.blocks()).isEqualTo(2);
        assertThat(t.bytes()).isEqualTo(50);
        assertThat(t.temporaryBlocks()).isEqualTo(2);
        assertThat(t.liveBlocks()).isZero();
        assertThat(t.liveBytes()).isZero();
        assertThat(t.peakBytes()).isEqualTo(40);
    }

    @Test
    void nothingAllocatedPrintsNothing() {
        load(0x500000);
        StringWriter text = new StringWriter();
        heap.print(new PrintWriter(text, true), 1, true);
        assertThat(text.toString()).isEmpty();
        assertThat(heap.json(1, true)).containsEntry("allocatedBlocks", 0L).containsEntry("peakSequence", null);
    }
}
