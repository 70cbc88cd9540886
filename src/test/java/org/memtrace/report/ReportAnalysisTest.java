package org.memtrace.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.memtrace.event.Event;
import org.memtrace.trace.Naming;
import org.memtrace.analysis.Access;
import org.memtrace.analysis.Allocation;
import org.memtrace.analysis.HeapTotals;

class ReportAnalysisTest {
    /** Names one global, {@code table} at 0x5000 (64 bytes), and call sites as {@code main+N}. */
    static class FakeNaming implements Naming {
        int dataCalls;

        @Override public void observe(Event event) {}

        @Override public String region(long address) { return "prog"; }

        @Override
        public String data(long address) {
            dataCalls++;
            return address >= 0x5000 && address < 0x5040 ? "table+" + (address - 0x5000) : "0x" + Long.toHexString(address);
        }

        @Override public String code(long ip) { return "main+" + (ip - 0x400000); }

        @Override public String block(Event.Alloc allocation) { return NO_BLOCK; }
    }

    private final FakeNaming naming = new FakeNaming();
    private final ReportAnalysis report = new ReportAnalysis(naming);
    private long seq;

    private static Event.Alloc alloc(Event.AllocFunction f, long caller, long result, long usable, long... args) {
        long[] six = new long[6];
        System.arraycopy(args, 0, six, 0, args.length);
        return new Event.Alloc(1, f, caller, result, usable, six);
    }

    private void access(long address, boolean store) {
        report.access(Access.of(naming, seq++, 1, 0x400100, address, 4, store));
    }

    private void allocation(Event.Alloc a, String block) {
        report.allocation(new Allocation(seq++, a, block, null));
    }

    @Test
    void heapBlocksCountTheirAccessesAndTheirSiteTheBytes() {
        allocation(alloc(Event.AllocFunction.MALLOC, 0x400010, 0x10000, 24, 20), "<malloc0001@main+16>");
        for (int i = 0; i < 5; i++) access(0x10000 + 4 * i, false);
        access(0x10004, true);
        access(0x10018, false); // just past the usable bytes: not the block's
        ReportAnalysis.Obj block = report.hottestObjects(10).stream().filter(o -> o.name.startsWith("<malloc")).findFirst().orElseThrow();
        assertThat(List.of(block.loads, block.stores, block.size)).containsExactly(5L, 1L, 24L);
        ReportAnalysis.Site site = report.sites(10).getFirst();
        assertThat(site.name).isEqualTo("main+16");
        assertThat(List.of(site.blocks, site.bytes, site.maxLive, site.readBytes, site.writtenBytes)).containsExactly(1L, 20L, 20L, 20L, 4L); // the 20 bytes asked for, as DHAT counts
        assertThat(report.hottestObjects(10)).extracting(o -> o.name).contains("[unknown]");
    }

    @Test
    void accessesAfterFreeAreListedWithBothSites() {
        allocation(alloc(Event.AllocFunction.MALLOC, 0x400010, 0x10000, 64, 64), "<malloc0001@main+16>");
        access(0x10000, true);
        allocation(alloc(Event.AllocFunction.FREE, 0x400020, 0, 0, 0x10000), "<freed:0001@main+16>");
        access(0x1000c, false);
        assertThat(report.freedAccessCount()).isEqualTo(1);
        ReportAnalysis.FreedAccess f = report.freedAccesses().getFirst();
        assertThat(f).isEqualTo(new ReportAnalysis.FreedAccess(3, false, 0x400100, "<freed:0001@main+16>", 12, "main+16", "main+32",
                f.allocationStack(), f.freeStack(), null));
        // without stacks in the trace, each is its call site
        assertThat(f.allocationStack().frames()).containsExactly(0x400010L);
        assertThat(f.freeStack().frames()).containsExactly(0x400020L);
        // a new block over the freed one retires it; both stay in the table, the new one takes the accesses
        allocation(alloc(Event.AllocFunction.MALLOC, 0x400030, 0x10000, 32, 32), "<malloc0002@main+48>");
        access(0x10000, false);
        assertThat(report.freedAccessCount()).isEqualTo(1);
        assertThat(report.hottestObjects(10)).extracting(o -> o.name + "=" + o.accesses())
                .containsExactly("<malloc0001@main+16>=2", "<malloc0002@main+48>=1");
        assertThat(report.sites(10)).extracting(s -> s.name + ":" + s.maxLive).containsExactly("main+16:64", "main+48:32");
    }

    /**
     * The report and the summary's heap totals count by one rule (FreedMemory), on python3's pattern: a block
     * over the start of a freed one leaves its tail freed, strlen's last vector of a loop iteration spills
     * there (no use), the program's load there is one. The report used to drop the whole freed block (0),
     * the summary counted strlen's load too (2).
     */
    @Test
    void theReportAndTheSummaryCountTheSameAccessesToFreedMemory() {
        Naming strlen = new FakeNaming() {
            @Override public String code(long ip) { return ip == 0x402000 ? "__strlen_evex+229" : super.code(ip); }
        };
        ReportAnalysis r = new ReportAnalysis(strlen);
        HeapTotals heap = new HeapTotals();
        List<Object> events = List.of(
                alloc(Event.AllocFunction.MALLOC, 0x400010, 0x10000, 0x400, 0x3f8), "<malloc0001@main+16>",
                alloc(Event.AllocFunction.FREE, 0x400020, 0, 0, 0x10000), "<freed:0001@main+16>",
                alloc(Event.AllocFunction.MALLOC, 0x400030, 0x10000, 0x1d8, 0x1d0), "<malloc0002@main+48>");
        for (int i = 0; i < events.size(); i += 2) {
            Allocation a = new Allocation(seq++, (Event.Alloc) events.get(i), (String) events.get(i + 1), null);
            r.allocation(a);
            heap.allocation(a);
        }
        for (long v = 0x10180; v < 0x10200; v += 32) {
            Access t = Access.of(strlen, seq++, 1, 0x402000, v, 32, false);
            r.access(t);
            heap.access(t);
        }
        Access own = Access.of(strlen, seq++, 1, 0x400100, 0x101e0, 8, false);
        r.access(own);
        heap.access(own);
        assertThat(r.freedAccessCount()).isEqualTo(1);
        assertThat(heap.totals().freedAccesses()).isEqualTo(1);
        assertThat(heap.totals().firstFreedSequence()).isEqualTo(7);
        ReportAnalysis.FreedAccess f = r.freedAccesses().getFirst();
        assertThat(List.of(f.sequence(), f.block(), f.offset(), f.allocationSite(), f.freeSite()))
                .containsExactly(7L, "<freed:0001@main+16>", 0x1e0L, "main+16", "main+32");
    }

    /** The stack and other bracketed regions are not globals. */
    @Test
    void regionsHaveTheirOwnKinds() {
        Naming regions = new FakeNaming() {
            @Override
            public String data(long address) {
                if (address >= 0x7ff000) return "[stack]+" + (address - 0x7ff000);
                if (address >= 0x600000) return "[anon]+" + (address - 0x600000);
                return super.data(address);
            }
        };
        ReportAnalysis r = new ReportAnalysis(regions);
        r.access(Access.of(regions, 0, 1, 0x400100, 0x7ff010, 8, true));
        r.access(Access.of(regions, 1, 1, 0x400100, 0x7ff018, 8, true));
        r.access(Access.of(regions, 2, 1, 0x400100, 0x600000, 8, false));
        r.access(Access.of(regions, 3, 1, 0x400100, 0x5000, 4, false));
        assertThat(r.hottestObjects(10)).extracting(o -> o.name + ":" + o.kind)
                .containsExactly("[stack]:STACK", "[anon]:REGION", "table:GLOBAL");
    }

    @Test
    void globalsAreNamedOnceAndKeepTheirOffsets() {
        for (int r = 0; r < 3; r++) for (int i = 0; i < 16; i++) access(0x5000 + 4 * i, r == 0);
        ReportAnalysis.Obj table = report.hottestObjects(1).getFirst();
        assertThat(table.name).isEqualTo("table");
        assertThat(List.of(table.loads, table.stores)).containsExactly(32L, 16L);
        // one naming per new offset on the first walk; the two later walks hit the resolved span
        assertThat(naming.dataCalls).isEqualTo(16);
        assertThat(table.grid.reads[0] + table.grid.writes[0]).isPositive();
    }

    /** memset into a block writes it, memcpy out of it reads it: its site counts those bytes too (DHAT does). */
    @Test
    void blockOperationsCountForTheSiteOfTheBlockTheyTouch() {
        allocation(alloc(Event.AllocFunction.MALLOC, 0x400010, 0x10000, 104, 100), "<malloc0001@main+16>");
        report.block(seq++, new Event.Block(1, Event.BlockOp.STORE, false, 0x400020, 0x10000, 0, 100, Event.BlockFunction.MEMSET.code));
        // 40 bytes copied out, 8 of them from past the block's usable end: not its bytes
        report.block(seq++, new Event.Block(1, Event.BlockOp.COPY, false, 0x400030, 0x30000, 0x10000 + 72, 40, Event.BlockFunction.MEMCPY.code));
        ReportAnalysis.Site site = report.sites(1).getFirst();
        assertThat(List.of(site.readBytes, site.writtenBytes)).containsExactly(32L, 100L);
    }

    @Test
    void reallocReleasesTheOldBlockAndSiteLiveBytesFollow() {
        allocation(alloc(Event.AllocFunction.MALLOC, 0x400010, 0x10000, 40, 40), "<malloc0001@main+16>");
        allocation(alloc(Event.AllocFunction.REALLOC, 0x400010, 0x20000, 400, 0x10000, 400), "<realloc0002@main+16>");
        access(0x10000, false);
        ReportAnalysis.Site site = report.sites(1).getFirst();
        assertThat(List.of(site.blocks, site.bytes, site.live, site.maxLive)).containsExactly(2L, 440L, 400L, 400L);
        assertThat(report.freedAccesses().getFirst().block()).isEqualTo("<freed:0001@main+16>");
    }

    /**
     * Two objects the naming gives one name (two {@code [anon]} mappings, two statics before they were
     * qualified) are two records, each with offsets from its own start: touching the higher one first used
     * to put the lower one's accesses at negative offsets of one record, and its grid threw.
     */
    @Test
    void objectsOfOneNameAtTwoStartsAreTwoObjects() {
        Naming twoTables = new FakeNaming() {
            @Override
            public String data(long address) {
                return address >= 0x9000 && address < 0x9040 ? "table+" + (address - 0x9000) : super.data(address);
            }
        };
        ReportAnalysis r = new ReportAnalysis(twoTables);
        long[] order = {0x9010, 0x9010, 0x5000, 0x5004, 0x9000};
        for (int i = 0; i < order.length; i++) r.access(Access.of(twoTables, i, 1, 0x400100, order[i], 4, false));
        assertThat(r.hottestObjects(10)).extracting(o -> o.name + "@0x" + Long.toHexString(o.start) + "=" + o.loads)
                .containsExactly("table@0x9000=3", "table@0x5000=2");
        assertThat(r.hottestObjects(10)).allSatisfy(o -> assertThat(o.grid).isNotNull());
    }
}
