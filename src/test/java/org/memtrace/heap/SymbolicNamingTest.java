package org.memtrace.heap;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.event.Event;
import org.memtrace.event.Event.AllocFunction;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.ProbeRun;

/** The names a MadT symbolic line gets, for the real layout of a running probe program plus heap events. */
class SymbolicNamingTest {

    @TempDir
    static Path dir;
    static ProbeRun run;
    static long heapStart;

    @BeforeAll
    static void start() throws Exception {
        run = ProbeRun.of(Gcc.compile(dir, "probe.c", "probe", "-g"));
        heapStart = run.events().stream()
                .filter(e -> e instanceof Event.Mapping m && m.path().equals("[heap]"))
                .mapToLong(e -> ((Event.Mapping) e).start()).findFirst().orElseThrow();
    }

    static SymbolicNaming naming() {
        SymbolicNaming naming = new SymbolicNaming();
        run.events().forEach(naming::observe);
        return naming;
    }

    static Event.Alloc alloc(AllocFunction f, long caller, long result, long usable, long... args) {
        return HeapTrackerTest.alloc(f, caller, result, usable, args);
    }

    @Test
    void globalsStaticsAndLibraryDataResolveToTheirNames() {
        SymbolicNaming naming = naming();
        // probe.c is built with -g: data names the element, object the variable and the byte in it
        assertThat(naming.data(run.address("table"))).isEqualTo("table[10]+0");
        assertThat(naming.object(run.address("table"))).isEqualTo("table+40");
        assertThat(naming.region(run.address("table"))).isEqualTo("probe");
        assertThat(naming.data(run.address("counter_s") + 2)).isEqualTo("counter_s+2");
        assertThat(naming.data(run.address("stdout"))).isEqualTo("stdout+0");
        // libc's types come from libc6-dbg's debug file: FILE's third pointer after the int _flags and padding
        assertThat(naming.data(run.address("stdout_file") + 16)).isEqualTo("_IO_2_1_stdout_.file._IO_read_end+0");
        assertThat(naming.object(run.address("stdout_file") + 16)).isEqualTo("_IO_2_1_stdout_+16");
        assertThat(naming.region(run.address("stdout_file"))).isEqualTo("libc.so.6");
        assertThat(naming.code(run.address("findDisparity") + 73)).isEqualTo("findDisparity+73");
        assertThat(naming.code(run.address("puts") + 9)).isEqualTo("puts+9");
    }

    @Test
    void codeOfAProgramBuiltWithDashGAndOfLibcHasSourceLines() throws Exception {
        SymbolicNaming naming = naming();
        // Gcc.compile hands gcc the absolute path of the source, so that is the name as compiled.
        int helperLine = java.nio.file.Files.readAllLines(dir.resolve("probe.c")).indexOf(
                "static __attribute__((noinline)) int helper(int x) {") + 1;
        assertThat(helperLine).isPositive();
        assertThat(naming.source(run.address("helper"))).isEqualTo(dir.resolve("probe.c") + ":" + helperLine);
        assertThat(naming.source(run.address("puts"))).matches("libio/ioputs\\.c:\\d+");
        assertThat(naming.source(8)).isNull();
    }

    @Test
    void aHeapBlockKeepsItsNameUpToTheEndOfItsPieceAndNothingElseClaimsARun() {
        SymbolicNaming naming = naming();
        long site = run.address("findDisparity") + 45;
        long p = heapStart + 0x2a0;
        naming.observe(alloc(AllocFunction.MALLOC, site, p, 536, 528));
        assertThat(naming.sameObjectUntil(p + 100)).isEqualTo(p + 536);
        // a later block over the second half cuts the first block's run where it starts
        naming.observe(alloc(AllocFunction.FREE, site, 0, 0, p));
        naming.observe(alloc(AllocFunction.MALLOC, site, p + 256, 64, 64));
        assertThat(naming.sameObjectUntil(p + 100)).isEqualTo(p + 256);
        assertThat(naming.object(p + 255)).isEqualTo("<freed:0001@findDisparity+45>+255");
        // globals are not claimed: another symbol may start at the next byte
        assertThat(naming.sameObjectUntil(run.address("table"))).isEqualTo(run.address("table") + 1);
    }

    /**
     * Property: wherever the naming gives a span, every address in it has the span's names, as data, object
     * and region say them one by one; over every mapping of a real run with blocks, freed pieces and a
     * mapped block placed in it. A typed global has none (its bytes are named by field).
     */
    @Test
    void everyAddressOfASpanIsNamedAsTheSpanSays() {
        SymbolicNaming naming = naming();
        long site = run.address("findDisparity") + 45;
        long p = heapStart + 0x2a0;
        naming.observe(alloc(AllocFunction.MALLOC, site, p, 536, 528));
        naming.observe(alloc(AllocFunction.MALLOC, site, p + 1024, 64, 60));
        naming.observe(alloc(AllocFunction.FREE, site, 0, 0, p));
        naming.observe(alloc(AllocFunction.MALLOC, site, p + 256, 64, 64));
        naming.observe(alloc(AllocFunction.MMAP, site, 0x7e0000000000L, 8192, 0, 8000, 3, 0x22, -1, 0));
        // a typed global: no base+offset name, said once for all of its bytes
        var table = naming.span(run.address("table"));
        assertThat(table.named()).isFalse();
        assertThat(naming.object(table.start())).isEqualTo("table+0");
        assertThat(naming.object(table.end() - 1)).startsWith("table+");
        assertThat(naming.span(table.end() - 1)).isEqualTo(table);
        assertThat(naming.span(table.end())).isNotEqualTo(table);
        java.util.Random random = new java.util.Random(7);
        java.util.List<long[]> ranges = new java.util.ArrayList<>();
        run.events().forEach(e -> { if (e instanceof Event.Mapping m) ranges.add(new long[] {m.start(), m.end()}); });
        ranges.add(new long[] {0x7e0000000000L, 0x7e0000002000L});
        ranges.add(new long[] {p - 64, p + 2048});
        int spans = 0;
        for (long[] r : ranges) {
            for (int i = 0; i < 200; i++) {
                long a = r[0] + random.nextLong(r[1] - r[0]);
                var span = naming.span(a);
                if (span == null) continue;
                if (!span.named()) {
                    assertThat(naming.span(span.start())).isEqualTo(span);
                    assertThat(naming.span(span.end() - 1)).isEqualTo(span);
                    continue;
                }
                spans++;
                assertThat(span.contains(a)).isTrue();
                for (long b : new long[] {span.start(), a, span.end() - 1, span.start() + random.nextLong(span.end() - span.start())}) {
                    String name = span.base() + "+" + (b - span.origin());
                    assertThat(naming.data(b)).as("data 0x%x in %s", b, span).isEqualTo(name);
                    assertThat(naming.object(b)).as("object 0x%x in %s", b, span).isEqualTo(name);
                    assertThat(naming.region(b)).as("region 0x%x in %s", b, span).isEqualTo(span.region());
                }
            }
        }
        assertThat(spans).isGreaterThan(1000);
        assertThat(naming.span(p + 100)).isEqualTo(new org.memtrace.trace.Naming.Span("<freed:0001@findDisparity+45>", p, p, p + 256, "[heap]"));
        assertThat(naming.span(heapStart + 16)).isEqualTo(new org.memtrace.trace.Naming.Span("[heap]", heapStart, heapStart, p, "[heap]"));
    }

    @Test
    void heapBlocksAreNamedByAllocationAndAUseAfterFreeShowsFreed() {
        SymbolicNaming naming = naming();
        long site = run.address("findDisparity") + 45;
        long p = heapStart + 0x2a0;
        Event.Alloc malloc = alloc(AllocFunction.MALLOC, site, p, 536, 528);
        naming.observe(malloc);
        assertThat(naming.block(malloc)).isEqualTo("<malloc0001@findDisparity+45>");
        assertThat(naming.data(p + 524)).isEqualTo("<malloc0001@findDisparity+45>+524");
        assertThat(naming.region(p + 524)).isEqualTo("[heap]");
        assertThat(naming.data(heapStart + 16)).isEqualTo("[heap]+16");
        Event.Alloc free = alloc(AllocFunction.FREE, site + 30, 0, 0, p);
        naming.observe(free);
        assertThat(naming.block(free)).isEqualTo("<freed:0001@findDisparity+45>");
        assertThat(naming.data(p + 8)).startsWith("<freed:").isEqualTo("<freed:0001@findDisparity+45>+8");
        assertThat(naming.block(malloc)).isEqualTo("<freed:0001@findDisparity+45>");
    }

    /** A real process with allocator wrappers preloaded: real return addresses name the call sites. */
    @Test
    void allocationsOfARealRunAreNamedByTheirCallSitesInTheProgramAndInLibc() throws Exception {
        Path shim = Gcc.compile(dir, "allocshim.c", "liballocshim.so", "-shared", "-fPIC");
        ProbeRun traced = ProbeRun.of(dir.resolve("probe"), shim);
        SymbolicNaming naming = new SymbolicNaming();
        long block = traced.address("block");
        String name = null;
        String freed = null;
        for (Event e : traced.events()) {
            naming.observe(e);
            if (e instanceof Event.Alloc a && a.function() == AllocFunction.MALLOC && a.result() == block) {
                name = naming.block(a);
                assertThat(naming.data(block + 524)).isEqualTo(name + "+524");
                assertThat(naming.region(block + 524)).isEqualTo("[heap]");
            }
            if (e instanceof Event.Alloc a && a.function() == AllocFunction.FREE && a.arg(0) == block) freed = naming.block(a);
        }
        assertThat(name).matches("<malloc\\d{4}@main\\+\\d+>");
        assertThat(freed).isEqualTo("<freed:" + name.substring(7));
        assertThat(naming.data(block + 8)).isEqualTo(freed + "+8");
        // stdio's buffers come from libc's own calls, named by the libc function that made them.
        assertThat(traced.events()).filteredOn(e -> e instanceof Event.Alloc a && a.function() == AllocFunction.MALLOC)
                .map(e -> naming.code(((Event.Alloc) e).caller()))
                .anySatisfy(site -> assertThat(site).doesNotStartWith("main+").doesNotStartWith("0x").doesNotContain("+0x"));
    }

    @Test
    void mappedBlocksLiveInAnonymousMemory() {
        SymbolicNaming naming = naming();
        long site = run.address("helper") + 5;
        Event.Alloc mmap = alloc(AllocFunction.MMAP, site, 0x7e0000000000L, 8192, 0, 8000, 3, 0x22, -1, 0);
        naming.observe(mmap);
        assertThat(naming.block(mmap)).isEqualTo("<memmap0001@helper+5>");
        assertThat(naming.data(0x7e0000000010L)).isEqualTo("<memmap0001@helper+5>+16");
        assertThat(naming.region(0x7e0000000010L)).isEqualTo("[anon]");
        naming.observe(alloc(AllocFunction.MUNMAP, site, 0, 0, 0x7e0000000000L, 8000));
        assertThat(naming.data(0x7e0000001000L)).isEqualTo("<unmap:0001@helper+5>+4096");
    }

    @Test
    void failuresUnknownAddressesAndExec() {
        SymbolicNaming naming = naming();
        Event.Alloc failed = alloc(AllocFunction.MALLOC, run.address("helper"), 0, 0, 1L << 50);
        naming.observe(failed);
        assertThat(naming.block(failed)).isEqualTo("(nil)");
        assertThat(naming.data(0x10)).isEqualTo("0x10");
        assertThat(naming.region(0x10)).isEqualTo("[unknown]");
        Event.Alloc malloc = alloc(AllocFunction.MALLOC, run.address("helper"), heapStart + 64, 24, 24);
        naming.observe(malloc);
        assertThat(naming.block(malloc)).isEqualTo("<malloc0001@helper+0>");
        // a failed exec: the same program goes on with the same blocks
        naming.observe(new Event.Exit(1, Event.ExitKind.EXEC, 0, 0, 0, "/nonexistent"));
        assertThat(naming.data(heapStart + 64)).isEqualTo("<malloc0001@helper+0>+0");
    }

    @Test
    void callSitesInUnknownCodeUseTheModuleRelativeForm() {
        SymbolicNaming naming = naming();
        Event.Alloc malloc = alloc(AllocFunction.MALLOC, 0x1234, heapStart + 64, 24, 24);
        naming.observe(malloc);
        assertThat(naming.block(malloc)).isEqualTo("<malloc0001@0x1234>");
    }
}
