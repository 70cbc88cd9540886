package org.memtrace.cli;

import static org.assertj.core.api.Assertions.*;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.event.Event;
import org.memtrace.event.SavedStream;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;
import org.memtrace.testutil.TraceFile.Line;

/** memtrace run on real programs with the real agent, in a fresh JVM each time. */
class RunIntegrationTest {
    @TempDir static Path dir;

    @BeforeAll
    static void build() throws Exception {
        for (String p : List.of("global_array", "heap_block", "write_heap", "start_stop", "crash", "forever", "own_signals"))
            Gcc.compile(dir, p + ".c", p, "-g", "-no-pie");
        Gcc.compile(dir, "threads.c", "threads", "-g", "-no-pie", "-pthread");
    }

    /** The address of a global from the symbol table (-no-pie: link-time address = run-time address). */
    static long symbol(String program, String name) throws Exception {
        return symbolIn(dir.resolve(program), name);
    }

    static long symbolIn(Path program, String name) throws Exception {
        String nm = Gcc.run(List.of("nm", program.toString()));
        return nm.lines().map(l -> l.split(" ")).filter(f -> f.length == 3 && f[2].equals(name))
                .mapToLong(f -> Long.parseUnsignedLong(f[0], 16)).findFirst().orElseThrow();
    }

    static Cli.Result memtrace(String trace, String... args) throws Exception {
        String[] all = new String[args.length + 7];
        System.arraycopy(new String[] {"run", "--mode", "fault", "--addresses", "raw", "-o", dir.resolve(trace).toString()}, 0, all, 0, 7);
        System.arraycopy(args, 0, all, 7, args.length);
        return Cli.run(dir, all);
    }

    static List<Line> storesIn(TraceFile t, long start, long bytes) {
        return t.of('S').stream().filter(l -> l.number(0) >= start && l.number(0) < start + bytes).toList();
    }

    @Test
    void oneStorePerElementOfAGlobalArray() throws Exception {
        var r = memtrace("array.trace", "--", dir.resolve("global_array").toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        long table = symbol("global_array", "table");
        TraceFile t = TraceFile.read(dir.resolve("array.trace"));
        List<Line> stores = storesIn(t, table, 400);
        assertThat(stores).extracting(l -> l.number(0))
                .containsExactlyElementsOf(java.util.stream.LongStream.range(0, 100).map(i -> table + 4 * i).boxed().toList());
        assertThat(stores).allSatisfy(l -> assertThat(l.field(1)).isEqualTo("global_array"));
        assertThat(r.stderr()).contains("memtrace summary", "the program exited with status 0");
    }

    @Test
    void heapBlockIsAllocatedWrittenAndFreedAndTheStatusPassesThrough() throws Exception {
        Path json = dir.resolve("heap.json");
        var r = memtrace("heap.trace", "--json-summary", json.toString(), "--", dir.resolve("heap_block").toString());
        assertThat(r.status()).as(r.stderr()).isEqualTo(7);
        var summary = new com.fasterxml.jackson.databind.ObjectMapper().readTree(json.toFile());
        assertThat(summary.get("exitStatus").asInt()).isEqualTo(7);
        assertThat(summary.get("allocations").asLong()).isPositive();
        assertThat(summary.get("stores").asLong()).isGreaterThanOrEqualTo(16);
        TraceFile t = TraceFile.read(dir.resolve("heap.trace"));
        Line malloc = t.of('M').stream().filter(l -> l.field(1).equals("64")).findFirst().orElseThrow();
        long block = malloc.number(0);
        Line free = t.of('F').stream().filter(l -> l.number(0) == block).findFirst().orElseThrow();
        List<Line> stores = storesIn(t, block, 64);
        assertThat(stores).extracting(l -> l.number(0))
                .containsExactlyElementsOf(java.util.stream.LongStream.range(0, 16).map(i -> block + 4 * i).boxed().toList());
        assertThat(stores).allSatisfy(s -> assertThat(s.sequence()).isBetween(malloc.sequence(), free.sequence()));
        assertThat(stores).allSatisfy(s -> assertThat(s.field(1)).isEqualTo("[heap]"));
    }

    @Test
    void writeOfAHeapBufferStillPrints() throws Exception {
        String plain = Gcc.run(List.of(dir.resolve("write_heap").toString()));
        var r = memtrace("write.trace", "--", dir.resolve("write_heap").toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo(plain).contains("written from the heap");
        TraceFile t = TraceFile.read(dir.resolve("write.trace"));
        assertThat(t.of('G')).anySatisfy(g -> {
            assertThat(g.fields().getLast()).isEqualTo("write");
            assertThat(g.field(2)).isEqualTo("22");
        });
    }

    @Test
    void fourConcurrentThreadsCompleteWithEachThreadsEvents() throws Exception {
        var r = memtrace("threads.trace", "--", dir.resolve("threads").toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        TraceFile t = TraceFile.read(dir.resolve("threads.trace"));
        String main = t.lines().getFirst().fields().getLast();
        var started = t.comments().stream().filter(c -> c.matches("thread \\d+ start .*")).map(c -> c.split(" ")[1])
                .filter(tid -> !tid.equals(main)).collect(Collectors.toSet());
        var exited = t.comments().stream().filter(c -> c.matches("thread \\d+ exit .*")).map(c -> c.split(" ")[1])
                .collect(Collectors.toSet());
        assertThat(started).hasSize(4);
        assertThat(exited).containsAll(started);
        // Every store is recorded, once, attributed to the thread that owns that slice: no page is ever
        // opened while the threads run (the alias route), so none can slip through.
        long slots = symbol("threads", "slots");
        List<Line> stores = storesIn(t, slots, 4 * 4 * 50);
        assertThat(stores).hasSize(200).extracting(l -> l.number(0)).doesNotHaveDuplicates();
        Map<String, List<Long>> slicesByThread = stores.stream().collect(Collectors.groupingBy(l -> l.field(4),
                Collectors.mapping(l -> (l.number(0) - slots) / 200, Collectors.toList())));
        assertThat(slicesByThread.keySet()).containsExactlyInAnyOrderElementsOf(started);
        assertThat(slicesByThread.values()).allSatisfy(slices -> assertThat(slices).hasSize(50).containsOnly(slices.getFirst()));
        assertThat(summaryCount(r.stderr(), "windows at risk")).isZero();
    }

    @Test
    void everyStoreOfEveryThreadIsRecordedWhenThreadsTakeTurns() throws Exception {
        var r = memtrace("threads-serial.trace", "--", dir.resolve("threads").toString(), "serial");
        assertThat(r.status()).as(r.stderr()).isZero();
        TraceFile t = TraceFile.read(dir.resolve("threads-serial.trace"));
        long slots = symbol("threads", "slots");
        List<Line> stores = storesIn(t, slots, 4 * 4 * 50);
        assertThat(stores).hasSize(200);
        Map<String, List<Long>> byThread = stores.stream()
                .collect(Collectors.groupingBy(l -> l.field(4), Collectors.mapping(l -> (l.number(0) - slots) / 200, Collectors.toList())));
        assertThat(byThread).hasSize(4);
        // each thread wrote exactly its own slice of 50 ints
        assertThat(byThread.values()).allSatisfy(slices -> assertThat(slices).hasSize(50).containsOnly(slices.getFirst()));
    }

    private static long summaryCount(String stderr, String label) {
        return stderr.lines().map(String::strip).filter(l -> l.startsWith(label))
                .map(l -> l.substring(label.length()).strip().replace(",", "")).mapToLong(Long::parseLong)
                .findFirst().orElseThrow(() -> new AssertionError("no '" + label + "' in the summary:\n" + stderr));
    }

    @Test
    void ownSignalHandlersBlockedSignalsForkSystemAndExecKeepWorking() throws Exception {
        String prog = dir.resolve("own_signals").toString();
        String plain = Gcc.run(List.of(prog));
        var r = memtrace("own.trace", "--", prog);
        assertThat(r.stdout()).isEqualTo(plain).contains("own handler ran", "readv -1 Bad address", "child exited with 5",
                "from system", "exec'd echo");
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stderr()).contains("/bin/echo");
        TraceFile t = TraceFile.read(dir.resolve("own.trace"));
        assertThat(storesIn(t, symbol("own_signals", "guarded"), 4)).hasSize(1);
        assertThat(storesIn(t, symbol("own_signals", "blocked_store"), 4)).hasSize(1);
        // the child runs untraced: its store is not in the trace, its fork is
        assertThat(storesIn(t, symbol("own_signals", "child_store"), 4)).isEmpty();
        assertThat(t.comments()).anyMatch(c -> c.startsWith("fork ")).anyMatch(c -> c.startsWith("exec /bin/echo "));
    }

    @Test
    void startAndStopLimitTheTrace() throws Exception {
        var r = memtrace("startstop.trace", "--no-autostart", "--", dir.resolve("start_stop").toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        TraceFile t = TraceFile.read(dir.resolve("startstop.trace"));
        assertThat(storesIn(t, symbol("start_stop", "before"), 40)).isEmpty();
        assertThat(storesIn(t, symbol("start_stop", "inside"), 40)).hasSize(10);
        assertThat(storesIn(t, symbol("start_stop", "after"), 40)).isEmpty();
        assertThat(t.comments()).anyMatch(c -> c.startsWith("start ")).anyMatch(c -> c.startsWith("stop "));
    }

    @Test
    void aCrashLeavesAWellFormedTraceAndIsReported() throws Exception {
        var r = memtrace("crash.trace", "--save-stream", dir.resolve("crash.stream").toString(), "--", dir.resolve("crash").toString());
        assertThat(r.status()).isEqualTo(128 + 11);
        assertThat(r.stderr()).contains("killed by SIGSEGV");
        TraceFile t = TraceFile.read(dir.resolve("crash.trace"));
        assertThat(storesIn(t, symbol("crash", "counter"), 16)).hasSize(4);
        assertThat(t.comments().getLast()).startsWith("fatal signal 11 (SIGSEGV)");
        var events = new java.util.ArrayList<Event>();
        SavedStream.replay(dir.resolve("crash.stream"), events::add);
        assertThat(events.getLast()).isInstanceOfSatisfying(Event.Exit.class, x -> assertThat(x.kind()).isEqualTo(Event.ExitKind.SIGNAL));
    }

    @Test
    void symbolicAndBothModesShareSequenceNumbers() throws Exception {
        var r = Cli.run(dir, "run", "--mode", "fault", "--addresses", "both", "-q", "-o", dir.resolve("both.trace").toString(), "--",
                dir.resolve("global_array").toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stderr()).doesNotContain("memtrace summary");
        TraceFile t = TraceFile.read(dir.resolve("both.trace"));
        for (int i = 0; i + 1 < t.lines().size(); i += 2) {
            Line raw = t.lines().get(i), sym = t.lines().get(i + 1);
            assertThat(raw.raw()).isTrue();
            assertThat(sym.raw()).isFalse();
            assertThat(sym.sequence()).isEqualTo(raw.sequence());
            assertThat(sym.type()).isEqualTo(raw.type());
        }
    }

    @Test
    void sigtermToMemtraceEndsTheProgramAndKeepsWhatWasRecorded() throws Exception {
        Path out = dir.resolve("forever.stdout");
        Path err = dir.resolve("forever.stderr");
        Path trace = dir.resolve("forever.trace");
        Process memtrace = Cli.start(dir, out, err, "run", "--mode", "fault", "--addresses", "raw", "-o", trace.toString(), "--",
                dir.resolve("forever").toString());
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!java.nio.file.Files.readString(out).contains("running") && System.nanoTime() < deadline) Thread.sleep(50);
        Thread.sleep(300);
        var program = memtrace.descendants().filter(ph -> ph.info().command().orElse("").endsWith("forever")).findFirst();
        assertThat(program).isPresent();
        memtrace.destroy(); // SIGTERM to the JVM only, not to the program
        assertThat(memtrace.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(program.get().isAlive()).isFalse();
        String stderr = java.nio.file.Files.readString(err);
        assertThat(stderr).contains("memtrace summary", "killed by SIGTERM");
        TraceFile t = TraceFile.read(trace);
        assertThat(storesIn(t, symbol("forever", "ring"), 400)).hasSizeGreaterThan(10);
    }

    @Test
    void aFullDiskStopsTheTraceNotTheProgram() throws Exception {
        var r = Cli.run(dir, "run", "--mode", "fault", "-o", "/dev/full", "--", dir.resolve("write_heap").toString());
        assertThat(r.stdout()).contains("written from the heap", "printf line 2");
        assertThat(r.stderr().lines().filter(l -> l.contains("cannot write the trace"))).singleElement().asString()
                .startsWith("memtrace: ").contains("No space left on device");
        assertThat(r.stderr()).doesNotContain("trace written");
        assertThat(r.status()).isEqualTo(1);
    }

    @Test
    void traceToStandardOutputLimitedToTheHeap() throws Exception {
        var r = Cli.run(dir, "run", "--mode", "fault", "-q", "--addresses", "raw", "--regions", "heap", "-o", "-", "--",
                dir.resolve("global_array").toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        Path copy = java.nio.file.Files.writeString(dir.resolve("stdout.trace"), r.stdout());
        TraceFile t = TraceFile.read(copy);
        assertThat(t.comments()).anyMatch(c -> c.startsWith("agent ") && c.endsWith("regions=2"));
        assertThat(storesIn(t, symbol("global_array", "table"), 400)).isEmpty();
        assertThat(r.stderr()).isEmpty();
    }
}
