package org.memtrace.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.memtrace.event.Event;
import org.memtrace.heap.SymbolicNaming;
import org.memtrace.symbols.AddressSpace;
import org.memtrace.trace.InstructionShapes;
import org.memtrace.trace.Naming;

/**
 * The shared name cache keeps a data name across allocator calls that do not touch its address and
 * resolves it again after one that does: the names the analyses see are those of a cache-less naming, and
 * the count of lookups shows what was kept.
 */
class NamesTest {
    private static final int TID = 7;
    private static final long IP = 0x401000;
    private static final long A = 0x5000_0000L, B = 0x5000_1000L, MAP = 0x7f00_0000_0000L;

    /** The real naming, counting the data lookups the cache lets through, by address. */
    private static final class Counting implements Naming {
        final SymbolicNaming naming = new SymbolicNaming(new AddressSpace());
        final Map<Long, Integer> lookups = new HashMap<>();

        @Override public void observe(Event event) { naming.observe(event); }
        @Override public String region(long address) { return naming.region(address); }
        @Override public String data(long address) {
            lookups.merge(address, 1, Integer::sum);
            return naming.data(address);
        }
        @Override public String object(long address) { return naming.object(address); }
        @Override public String code(long ip) { return naming.code(ip); }
        @Override public String block(Event.Alloc allocation) { return naming.block(allocation); }
        @Override public boolean changedByAllocation(Ranges to) { return naming.changedByAllocation(to); }
        int lookups(long address) { return lookups.getOrDefault(address, 0); }
    }

    private final Counting naming = new Counting();
    private final List<String> seen = new ArrayList<>();
    private final Interpretation in = new Interpretation(naming, InstructionShapes.UNKNOWN, List.of(new Analysis() {
        @Override
        public void access(Access access) {
            seen.add(access.data());
        }
    }));

    private static Event.Alloc alloc(Event.AllocFunction f, long result, long usable, long... args) {
        long[] six = new long[6];
        System.arraycopy(args, 0, six, 0, args.length);
        return new Event.Alloc(TID, f, IP + 4, result, usable, six);
    }

    /** Loads of each address, returning the names they got. */
    private List<String> read(long... addresses) {
        seen.clear();
        for (long a : addresses) in.accept(new Event.Access(TID, IP, a, false, false));
        return List.copyOf(seen);
    }

    @Test
    void freeingABlockRenamesItsAddressesAndKeepsTheOthersCached() {
        in.accept(alloc(Event.AllocFunction.MALLOC, A, 32, 32));
        in.accept(alloc(Event.AllocFunction.MALLOC, B, 32, 32));
        assertThat(read(A + 8, B + 8)).containsExactly("<malloc0001@0x401004>+8", "<malloc0002@0x401004>+8");

        in.accept(alloc(Event.AllocFunction.FREE, 0, 0, A));
        assertThat(read(A + 8, B + 8)).containsExactly("<freed:0001@0x401004>+8", "<malloc0002@0x401004>+8");
        assertThat(naming.lookups(A + 8)).isEqualTo(2);
        assertThat(naming.lookups(B + 8)).isEqualTo(1);

        // a new block where the freed one was: renamed again, the other still kept
        in.accept(alloc(Event.AllocFunction.MALLOC, A, 32, 32));
        assertThat(read(A + 8, B + 8)).containsExactly("<malloc0003@0x401004>+8", "<malloc0002@0x401004>+8");
        assertThat(naming.lookups(A + 8)).isEqualTo(3);
        assertThat(naming.lookups(B + 8)).isEqualTo(1);
    }

    /**
     * A span found for one line of a page serves the page's other lines, but only as of when it was made: a
     * block allocated inside it since renames its own addresses, whichever line asked first.
     */
    @Test
    void aSpanServesOnlyTheAddressesNotRenamedSinceItWasMade() {
        SymbolicNaming real = new SymbolicNaming(new AddressSpace());
        List<String> bySpan = new ArrayList<>(), byAddress = new ArrayList<>();
        Interpretation stage = new Interpretation(real, InstructionShapes.UNKNOWN, List.of(new Analysis() {
            @Override
            public void access(Access access) {
                Naming.Span s = access.span();
                bySpan.add(s == null ? null : s.base() + "+" + (access.address() - s.origin()));
                byAddress.add(access.data());
            }
        }));
        stage.accept(alloc(Event.AllocFunction.MALLOC, A, 4096, 4096));
        stage.accept(new Event.Access(TID, IP, A + 8, false, false));
        // a block handed out inside the first one (a release the trace missed): its 16 bytes are renamed
        stage.accept(alloc(Event.AllocFunction.MALLOC, A + 128, 16, 16));
        for (long a : new long[] {A + 160, A + 128, A + 8}) stage.accept(new Event.Access(TID, IP, a, false, false));
        assertThat(byAddress).containsExactly("<malloc0001@0x401004>+8", "<malloc0001@0x401004>+160", "<malloc0002@0x401004>+0",
                "<malloc0001@0x401004>+8");
        assertThat(bySpan).isEqualTo(byAddress);
    }

    @Test
    void reallocRenamesTheOldBlockAndTheNewOneOnly() {
        in.accept(alloc(Event.AllocFunction.MALLOC, A, 32, 32));
        in.accept(alloc(Event.AllocFunction.MALLOC, B, 32, 32));
        long moved = A + 0x800;
        assertThat(read(A, moved, B)).containsExactly("<malloc0001@0x401004>+0", "0x50000800", "<malloc0002@0x401004>+0");

        in.accept(alloc(Event.AllocFunction.REALLOC, moved, 64, A, 64));
        assertThat(read(A, moved, B)).containsExactly(
                "<freed:0001@0x401004>+0", "<realloc0003@0x401004>+0", "<malloc0002@0x401004>+0");
        // A once more for the allocation's own line, which names the old block as it was before the call
        assertThat(naming.lookups(A)).isEqualTo(3);
        assertThat(naming.lookups(moved)).isEqualTo(2);
        assertThat(naming.lookups(B)).isEqualTo(1);
    }

    @Test
    void munmapAndMremapRenameThePagesTheyTouch() {
        in.accept(alloc(Event.AllocFunction.MMAP, MAP, 0, 0, 3 * 4096, 3, 0x22, -1, 0));
        in.accept(alloc(Event.AllocFunction.MALLOC, A, 32, 32));
        long first = MAP + 8, second = MAP + 4096 + 8, third = MAP + 2 * 4096 + 8;
        read(first, second, third, A);

        // a partial munmap: the middle page only
        in.accept(alloc(Event.AllocFunction.MUNMAP, 0, 0, MAP + 4096, 4096));
        assertThat(read(first, second, third)).containsExactly(
                "<memmap0001@0x401004>+8", "<unmap:0001@0x401004>+4104", "<memmap0001@0x401004>+8200");
        assertThat(List.of(naming.lookups(first), naming.lookups(second), naming.lookups(third))).containsExactly(1, 2, 1);

        // the last page moved elsewhere: its old page and its new one are renamed, the first page and the heap block kept
        long to = MAP + 0x10_0000;
        in.accept(alloc(Event.AllocFunction.MREMAP, to, 0, MAP + 2 * 4096, 4096, 4096, 1));
        assertThat(read(first, third, to + 8, A)).containsExactly(
                "<memmap0001@0x401004>+8", "<unmap:0001@0x401004>+8200", "<mremap0003@0x401004>+8", "<malloc0002@0x401004>+0");
        assertThat(List.of(naming.lookups(first), naming.lookups(third), naming.lookups(to + 8), naming.lookups(A)))
                .containsExactly(1, 2, 1, 1);
    }

    @Test
    void aRegionGoingAwayLikeDlcloseRenamesEverything() {
        long data = 0x60_0000;
        in.accept(new Event.Range(TID, true, data, data + 4096, Event.RegionKind.DATA, 3));
        in.accept(alloc(Event.AllocFunction.MALLOC, A, 32, 32));
        assertThat(read(data + 16, A)).containsExactly("[data]+16", "<malloc0001@0x401004>+0");

        in.accept(new Event.Range(TID, false, data, data + 4096, Event.RegionKind.DATA, 0));
        assertThat(read(data + 16, A)).containsExactly("0x600010", "<malloc0001@0x401004>+0");
        // the naming cannot say what a module or region change touched: every name is looked up again
        assertThat(naming.lookups(data + 16)).isEqualTo(2);
        assertThat(naming.lookups(A)).isEqualTo(2);
    }

    @Test
    void aNamingThatCannotTellWhatChangedHasEveryNameLookedUpAgain() {
        Counting counting = new Counting();
        Naming opaque = new Naming() {
            @Override public void observe(Event event) { counting.observe(event); }
            @Override public String region(long address) { return counting.region(address); }
            @Override public String data(long address) { return counting.data(address); }
            @Override public String code(long ip) { return counting.code(ip); }
            @Override public String block(Event.Alloc allocation) { return counting.block(allocation); }
        };
        Interpretation opaqueIn = new Interpretation(opaque, InstructionShapes.UNKNOWN, List.of(new Analysis() {
            @Override
            public void access(Access access) {
                access.data();
            }
        }));
        opaqueIn.accept(alloc(Event.AllocFunction.MALLOC, A, 32, 32));
        opaqueIn.accept(new Event.Access(TID, IP, B, false, false));
        opaqueIn.accept(alloc(Event.AllocFunction.FREE, 0, 0, A));
        opaqueIn.accept(new Event.Access(TID, IP, B, false, false));
        assertThat(counting.lookups(B)).isEqualTo(2);
    }
    /**
     * A typed global has no span, said by a span without a base over the whole global: its addresses, line
     * after line, ask the naming once per page, not once per line the cache has not seen (the
     * global's names are by field and index: {@link Access#span} stays null for every one of them).
     */
    @Test
    void aTypedGlobalIsAskedForItsSpanOnce() {
        long global = 0x60_0000L, size = 1 << 16;
        List<Long> asked = new ArrayList<>();
        Naming typed = new Naming() {
            @Override public void observe(Event event) {}
            @Override public String region(long address) { return "prog"; }
            @Override public String data(long address) { return "g[" + (address - global) / 8 + "]"; }
            @Override public String object(long address) { return "g+" + (address - global); }
            @Override public String code(long ip) { return null; }
            @Override public String block(Event.Alloc allocation) { return null; }
            @Override public Span span(long address) {
                asked.add(address);
                return address >= global && address < global + size ? new Span(null, 0, global, global + size, "prog") : null;
            }
        };
        List<Naming.Span> spans = new ArrayList<>();
        Interpretation stage = new Interpretation(typed, InstructionShapes.UNKNOWN, List.of(new Analysis() {
            @Override
            public void access(Access access) {
                spans.add(access.span());
            }
        }));
        for (long a = global; a < global + size; a += 64) stage.accept(new Event.Access(TID, IP, a, false, false));
        stage.accept(new Event.Access(TID, IP, global + size, false, false));
        assertThat(spans).hasSize((int) (size / 64) + 1).containsOnlyNulls();
        // once per 4 KiB page (the span's slot is by page), where it was once per 64-byte line
        List<Long> pages = new ArrayList<>();
        for (long a = global; a <= global + size; a += 4096) pages.add(a);
        assertThat(asked).isEqualTo(pages);
    }
}
