package org.memtrace.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.event.Event;
import org.memtrace.runtime.MtrTestFile.Access;
import org.memtrace.testutil.Gcc;

/**
 * libmemtrace-rt.so against hand-probed C programs (src/test/resources/c/runtime, probes from mt_probe.h):
 * the exact slots and events each run must leave in its .mtr file, whatever happens to the program.
 */
class RuntimeTraceTest {

    /** Where the Maven build's `make -C agent OUT=…` put the runtime. */
    private static final Path LIB = Path.of("target/classes/org/memtrace/launch").toAbsolutePath();

    @TempDir static Path dir;

    record Run(int status, String output, Path trace) {
        /** The hexadecimal number right after {@code key} on the line that starts with it. */
        long hex(String key) {
            for (String line : output.split("\n"))
                if (line.startsWith(key + " ")) return Long.parseUnsignedLong(line.substring(key.length() + 1).split(" ")[0], 16);
            throw new AssertionError("no " + key + " in output:\n" + output);
        }

        long site(int i) { return hex("SITE " + i); }

        int number(String key, int field) {
            for (String line : output.split("\n"))
                if (line.startsWith(key + " ")) return Integer.parseInt(line.trim().split(" ")[field]);
            throw new AssertionError("no " + key + " in output:\n" + output);
        }

        MtrTestFile file() throws IOException, InterruptedException { return MtrTestFile.read(trace); }
    }

    @BeforeAll
    static void compileFixtures() throws IOException, InterruptedException {
        assertThat(LIB.resolve("libmemtrace-rt.so")).exists();
        copy("mt_probe.h");
        for (String name : List.of("loop", "threads", "signals", "crash", "fork_exec", "calls", "control")) {
            copy("rt_" + name + ".c");
            Gcc.run(List.of("gcc", "-O0", "-fno-builtin", "-I" + Path.of("agent/include").toAbsolutePath(), "-I" + dir,
                    "-o", dir.resolve(name).toString(), dir.resolve("rt_" + name + ".c").toString(),
                    "-L" + LIB, "-Wl,-rpath," + LIB, "-lmemtrace-rt", "-pthread"));
        }
    }

    private static void copy(String name) throws IOException {
        try (InputStream in = RuntimeTraceTest.class.getResourceAsStream("/c/runtime/" + name)) {
            Files.copy(in, dir.resolve(name));
        }
    }

    /** Runs a fixture with {@code env} (MEMTRACE_OUT = a fresh file unless env says otherwise). */
    private static Run run(String program, Map<String, String> env, String... args) throws IOException, InterruptedException {
        Path trace = Files.createTempFile(dir, program, ".mtr");
        Files.delete(trace);
        List<String> command = new ArrayList<>(List.of("setarch", "x86_64", "-R", dir.resolve(program).toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD);
        pb.environment().keySet().removeIf(k -> k.startsWith("MEMTRACE_"));
        pb.environment().put("MEMTRACE_OUT", trace.toString());
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("%s finishes", program).isTrue();
        return new Run(p.exitValue(), out, trace);
    }

    private static Run run(String program, String... args) throws IOException, InterruptedException {
        return run(program, Map.of(), args);
    }

    /** Linear, with the first difference in the message (AssertJ's list diff is quadratic on 200,000 slots). */
    private static void assertSlots(List<Access> actual, List<Access> expected) {
        int n = Math.min(actual.size(), expected.size());
        for (int i = 0; i < n; i++)
            if (!actual.get(i).equals(expected.get(i)))
                throw new AssertionError("slot " + i + ": expected " + expected.get(i) + " but was " + actual.get(i));
        assertThat(actual.size()).as("slots").isEqualTo(expected.size());
    }

    private static List<Access> sweep(long base, long n, long site) {
        return LongStream.range(0, n).mapToObj(i -> new Access(base + 8 * i, site)).toList();
    }

    private static List<Access> concat(List<Access> a, List<Access> b) {
        List<Access> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    @Test
    void loopRecordsEveryAccessWithItsSiteAndTheAllocationAroundThem() throws Exception {
        Run r = run("loop", "1000");
        assertThat(r.status()).isEqualTo(3);
        MtrTestFile f = r.file();
        int pid = (int) f.pid();
        long a = r.hex("ARRAY");
        assertSlots(f.accesses(pid), concat(sweep(a, 1000, r.site(0)), sweep(a, 1000, r.site(1))));
        assertThat(f.tids()).containsExactly(pid);

        List<Event> events = f.events().stream().map(MtrTestFile.Tagged::event).toList();
        assertThat(events.getFirst()).isInstanceOfSatisfying(Event.Hello.class, h -> {
            assertThat(h.pid()).isEqualTo(pid);
            assertThat(h.pageSize()).isEqualTo(4096);
        });
        assertThat(events.get(1)).isEqualTo(new Event.ThreadEvent(pid, true, 0));
        assertThat(events.getLast()).isEqualTo(new Event.Exit(pid, Event.ExitKind.NORMAL, 3, 0, 0, ""));
        assertThat(f.events(Event.Module.class)).anySatisfy(m -> assertThat(m.path()).endsWith("/loop"))
                .anySatisfy(m -> assertThat(m.path()).endsWith("libmemtrace-rt.so"))
                .allSatisfy(m -> assertThat(m.buildId().length == 20 || m.path().contains("vdso")).isTrue());
        assertThat(f.events(Event.Mapping.class)).anySatisfy(m -> assertThat(m.path()).isEqualTo("[stack]"));
        assertThat(f.events(Event.Control.class)).containsExactly(new Event.Control(pid, true, 0));
        Event.Alloc malloc = f.events(Event.Alloc.class).stream().filter(x -> x.result() == a).findFirst().orElseThrow();
        assertThat(malloc.function()).isEqualTo(Event.AllocFunction.MALLOC);
        assertThat(malloc.args()[0]).isEqualTo(8000);
        assertThat(malloc.usable()).isGreaterThanOrEqualTo(8000);
        assertThat(f.events(Event.Alloc.class)).filteredOn(x -> x.function() == Event.AllocFunction.FREE && x.args()[0] == a).hasSize(1);

        // In the thread's own slot order: malloc, the 2000 accesses, free.
        List<MtrTestFile.Slot> slots = f.thread(pid);
        int mallocAt = indexOf(slots, e -> e == malloc), firstAccess = firstAccess(slots);
        int freeAt = indexOf(slots, e -> e instanceof Event.Alloc x && x.function() == Event.AllocFunction.FREE && x.args()[0] == a);
        assertThat(mallocAt).isLessThan(firstAccess);
        assertThat(freeAt).isGreaterThan(firstAccess + 1999);
        assertThat(f.end()).isEqualTo(new MtrTestFile.End(f.chunks().size(), 2000, 0));
    }

    private static int indexOf(List<MtrTestFile.Slot> slots, java.util.function.Predicate<Event> p) {
        for (int i = 0; i < slots.size(); i++)
            if (slots.get(i) instanceof MtrTestFile.Tagged t && p.test(t.event())) return i;
        return -1;
    }

    private static int firstAccess(List<MtrTestFile.Slot> slots) {
        for (int i = 0; i < slots.size(); i++) if (slots.get(i) instanceof Access) return i;
        return -1;
    }

    @Test
    void aBufferThatFillsHundredsOfTimesLosesNothing() throws Exception {
        Run r = run("loop", Map.of("MEMTRACE_BUFFER_KB", "8"), "100000");
        MtrTestFile f = r.file();
        long a = r.hex("ARRAY");
        assertSlots(f.accesses((int) f.pid()), concat(sweep(a, 100000, r.site(0)), sweep(a, 100000, r.site(1))));
        assertThat(f.chunks().size()).isGreaterThan(300);
        assertThat(f.chunks()).allSatisfy(c -> assertThat(c.slots().size()).isLessThanOrEqualTo(8192 / 16));
        assertThat(f.end().records()).isEqualTo(200000);
        assertThat(f.end().chunks()).isEqualTo(f.chunks().size());
    }

    @Test
    void everyCodecCarriesTheSameSlots() throws Exception {
        List<List<Access>> seen = new ArrayList<>();
        for (String codec : List.of("0", "1", "2", "3", "4", "5", "6", "7", "9", "10", "11")) {
            Run r = run("loop", Map.of("MEMTRACE_CODEC", codec, "MEMTRACE_BUFFER_KB", "16"), "5000");
            MtrTestFile f = r.file();
            assertThat(f.chunks()).allSatisfy(c -> assertThat(c.codec()).isEqualTo(Integer.parseInt(codec)));
            long a = r.hex("ARRAY");
            assertSlots(f.accesses((int) f.pid()), concat(sweep(a, 5000, r.site(0)), sweep(a, 5000, r.site(1))));
            seen.add(f.accesses((int) f.pid()));
        }
        assertThat(seen.get(0)).isEqualTo(seen.get(1)).isEqualTo(seen.get(2)).isEqualTo(seen.get(3)).isEqualTo(seen.get(4))
                .isEqualTo(seen.get(5)).isEqualTo(seen.get(6)).isEqualTo(seen.get(7)).isEqualTo(seen.get(8)); // setarch -R: same addresses every run
    }

    /** Heap addresses included: glibc's allocations for the writer thread stay out of the program's heap. */
    @Test
    void outputAndStatusAreTheSameTracedAndDiscarded() throws Exception {
        Run traced = run("loop", "3000");
        Run discarded = run("loop", Map.of("MEMTRACE_OUT", ""), "3000");
        assertThat(discarded.status()).isEqualTo(traced.status()).isEqualTo(3);
        assertThat(discarded.output()).isEqualTo(traced.output()).contains("SUM 4498500").contains("ARRAY 5555");
        assertThat(discarded.trace()).doesNotExist();
    }

    @Test
    void threadsHaveTheirOwnSlotsStartAndExit() throws Exception {
        long n = 20000;
        Run r = run("threads", Map.of("MEMTRACE_BUFFER_KB", "64"), Long.toString(n));
        assertThat(r.status()).isZero();
        MtrTestFile f = r.file();
        int main = r.number("MAIN", 1);
        assertThat(f.pid()).isEqualTo(main);
        List<Event.ThreadEvent> threads = f.events(Event.ThreadEvent.class);
        List<Integer> workers = threads.stream().filter(t -> t.started() && t.value() == main).map(Event.ThreadEvent::tid).toList();
        assertThat(workers).hasSize(2).doesNotContain(main);
        for (int w : workers) assertThat(threads).contains(new Event.ThreadEvent(w, false, 0));
        assertThat(threads).contains(new Event.ThreadEvent(main, true, 0));
        assertSlots(f.accesses(main), sweep(r.hex("ARRAY 0"), n, r.site(1)));
        List<List<Access>> expected = List.of(sweep(r.hex("ARRAY 1"), n, r.site(0)), sweep(r.hex("ARRAY 2"), n, r.site(0)));
        List<List<Access>> seen = workers.stream().map(f::accesses).toList();
        boolean straight = seen.get(0).equals(expected.get(0));
        assertSlots(seen.get(0), expected.get(straight ? 0 : 1));
        assertSlots(seen.get(1), expected.get(straight ? 1 : 0));
        // Each worker's start is its first slot and its exit its last; sequence numbers are unique.
        for (int w : workers) {
            assertThat(f.thread(w).getFirst()).isInstanceOfSatisfying(MtrTestFile.Tagged.class,
                    t -> assertThat(t.event()).isEqualTo(new Event.ThreadEvent(w, true, main)));
            assertThat(f.thread(w).getLast()).isInstanceOfSatisfying(MtrTestFile.Tagged.class,
                    t -> assertThat(t.event()).isEqualTo(new Event.ThreadEvent(w, false, 0)));
        }
        assertThat(f.events().stream().map(MtrTestFile.Tagged::sequence).distinct().count()).isEqualTo(f.events().size());
        assertThat(f.end().records()).isEqualTo(3 * n);
    }

    @Test
    void theProgramsOwnSigsegvHandlerStillCatchesItsFaults() throws Exception {
        long n = 2000;
        Run r = run("signals", Map.of("MEMTRACE_BUFFER_KB", "8"), Long.toString(n));
        assertThat(r.status()).isZero();
        assertThat(r.output()).contains("HANDLER ours").doesNotContain("NOT CAUGHT");
        assertThat(r.output().lines().filter(l -> l.equals("CAUGHT 11 10"))).hasSize(3);
        MtrTestFile f = r.file();
        long scratch = r.hex("SCRATCH");
        List<Access> expected = new ArrayList<>();
        for (int round = 0; round < 3; round++) {
            for (long i = 0; i < n; i++) expected.add(new Access(scratch, r.site(1)));
            expected.add(new Access(scratch + 8, r.site(0))); // the probe in the handler
        }
        assertSlots(f.accesses((int) f.pid()), expected);
        assertThat(f.end()).isNotNull();
    }

    @Test
    void abortLeavesTheWholeTraceAndHowItEnded() throws Exception {
        Run r = run("crash", Map.of("MEMTRACE_BUFFER_KB", "8"), "abort", "50000");
        assertThat(r.status()).isEqualTo(128 + 6);
        MtrTestFile f = r.file();
        int pid = (int) f.pid();
        assertSlots(f.accesses(pid), sweep(r.hex("ARRAY"), 50000, r.site(1)));
        Event last = f.events().getLast().event();
        assertThat(last).isInstanceOfSatisfying(Event.Exit.class, e -> {
            assertThat(e.kind()).isEqualTo(Event.ExitKind.SIGNAL);
            assertThat(e.value()).isEqualTo(6);
            assertThat(e.address()).isEqualTo(-1L);
        });
        assertThat(f.end().records()).isEqualTo(50000);
    }

    @Test
    void aNullPointerStoreLeavesTheWholeTraceAndTheFaultAddress() throws Exception {
        Run r = run("crash", Map.of("MEMTRACE_BUFFER_KB", "8"), "null", "50000");
        assertThat(r.status()).isEqualTo(128 + 11);
        MtrTestFile f = r.file();
        assertSlots(f.accesses((int) f.pid()), sweep(r.hex("ARRAY"), 50000, r.site(1)));
        assertThat(f.events().getLast().event()).isInstanceOfSatisfying(Event.Exit.class, e -> {
            assertThat(e.kind()).isEqualTo(Event.ExitKind.SIGNAL);
            assertThat(e.value()).isEqualTo(11);
            assertThat(e.address()).isZero();
            assertThat(e.ip()).isNotZero();
        });
        assertThat(f.end()).isNotNull();
    }

    @Test
    void aFatalSignalWritesTheBuffersOfThreadsStillRunning() throws Exception {
        long n = 20000;
        Run r = run("crash", Map.of("MEMTRACE_BUFFER_KB", "16"), "thread-null", Long.toString(n));
        assertThat(r.status()).isEqualTo(128 + 11);
        MtrTestFile f = r.file();
        int pid = (int) f.pid();
        assertSlots(f.accesses(pid), sweep(r.hex("ARRAY"), n, r.site(1)));
        int worker = f.events(Event.ThreadEvent.class).stream().filter(t -> t.started() && t.value() == pid)
                .map(Event.ThreadEvent::tid).findFirst().orElseThrow();
        List<Access> seen = f.accesses(worker);
        assertThat(seen.size()).isGreaterThanOrEqualTo((int) n); // the worker had made n stores before the crash
        long b = r.hex("WORKER_ARRAY");
        for (int i = 0; i < seen.size(); i++)
            if (!seen.get(i).equals(new Access(b + 8 * (i % n), r.site(0)))) throw new AssertionError("worker slot " + i + ": " + seen.get(i));
        assertThat(f.events().getLast().event()).isInstanceOfSatisfying(Event.Exit.class, e -> assertThat(e.value()).isEqualTo(11));
        assertThat(f.end()).isNotNull();
    }

    @Test
    void aSignalTheProgramLeavesAtItsDefaultIsRecordedAndKillsAsUntraced() throws Exception {
        Run r = run("crash", "term", "100");
        assertThat(r.status()).isEqualTo(128 + 15);
        assertThat(r.output()).contains("TERMS 1").doesNotContain("LOST HANDLER");
        MtrTestFile f = r.file();
        assertThat(f.events().getLast().event()).isInstanceOfSatisfying(Event.Exit.class, e -> {
            assertThat(e.kind()).isEqualTo(Event.ExitKind.SIGNAL);
            assertThat(e.value()).isEqualTo(15);
            assertThat(e.address()).isEqualTo(-1L);
        });
        assertThat(f.accesses((int) f.pid())).hasSize(100);
        assertThat(f.end()).isNotNull();
    }

    @Test
    void underscoreExitRecordsItsStatus() throws Exception {
        Run r = run("crash", "_exit", "100");
        assertThat(r.status()).isEqualTo(5);
        MtrTestFile f = r.file();
        assertThat(f.events().getLast().event()).isEqualTo(new Event.Exit((int) f.pid(), Event.ExitKind.NORMAL, 5, 0, 0, ""));
        assertThat(f.accesses((int) f.pid())).hasSize(100);
    }

    @Test
    void sigkillKeepsTheChunksWrittenSoFarAndNoEndRecord() throws Exception {
        long n = 100000;
        Run r = run("crash", Map.of("MEMTRACE_BUFFER_KB", "8"), "kill", Long.toString(n));
        assertThat(r.status()).isEqualTo(128 + 9);
        MtrTestFile f = r.file();
        assertThat(f.end()).isNull();
        assertThat(f.chunks()).isNotEmpty();
        List<Access> seen = f.accesses((int) f.pid());
        List<Access> all = sweep(r.hex("ARRAY"), n, r.site(1));
        assertThat(seen.size()).isLessThan((int) n); // the last buffer died with the process
        assertSlots(seen, all.subList(0, seen.size()));
    }

    @Test
    void aForkedChildWritesItsOwnFile() throws Exception {
        long n = 3000;
        Run r = run("fork_exec", "fork", Long.toString(n));
        assertThat(r.status()).isZero();
        int child = r.number("CHILD", 1);
        assertThat(r.number("CHILD", 2)).isZero();
        MtrTestFile parent = r.file();
        int pid = (int) parent.pid();
        assertThat(parent.events(Event.Fork.class)).containsExactly(new Event.Fork(pid, child));
        assertSlots(parent.accesses(pid), sweep(r.hex("ARRAY"), n, r.site(0)));
        MtrTestFile c = MtrTestFile.read(Path.of(r.trace() + "." + child));
        assertThat(c.pid()).isEqualTo(child);
        assertThat(c.tids()).containsExactly(child);
        assertThat(c.events().getFirst().event()).isInstanceOfSatisfying(Event.Hello.class, h -> assertThat(h.pid()).isEqualTo(child));
        assertThat(c.events(Event.ThreadEvent.class).getFirst()).isEqualTo(new Event.ThreadEvent(child, true, pid));
        assertThat(c.events(Event.Module.class)).isNotEmpty();
        assertSlots(c.accesses(child), sweep(r.hex("CHILD_ARRAY"), n, r.site(1)));
        assertThat(c.events().getLast().event()).isEqualTo(new Event.Exit(child, Event.ExitKind.NORMAL, 0, 0, 0, ""));
        assertThat(c.end()).isNotNull();
    }

    @Test
    void execEndsTheFileWithItsPathAndTheNewImageWritesItsOwn() throws Exception {
        Run r = run("fork_exec", "exec-ok", "500");
        assertThat(r.status()).isZero();
        MtrTestFile f = r.file();
        int pid = (int) f.pid();
        assertSlots(f.accesses(pid), sweep(r.hex("ARRAY"), 500, r.site(2)));
        assertThat(f.events().getLast().event()).isInstanceOfSatisfying(Event.Exit.class, e -> {
            assertThat(e.kind()).isEqualTo(Event.ExitKind.EXEC);
            assertThat(e.path()).isEqualTo(dir.resolve("fork_exec").toString());
        });
        assertThat(f.end()).isNotNull();
        // The new image (same pid) saw MEMTRACE_OUT=<file>.%p: its trace is <file>.<pid>.
        MtrTestFile image = MtrTestFile.read(Path.of(r.trace() + "." + pid));
        assertThat(image.pid()).isEqualTo(pid);
        assertThat(image.accesses(pid)).hasSize(7);
        assertThat(image.events().getLast().event()).isEqualTo(new Event.Exit(pid, Event.ExitKind.NORMAL, 0, 0, 0, ""));
    }

    @Test
    void aFailedExecGoesOnTracing() throws Exception {
        Run r = run("fork_exec", "exec-fail", "500");
        assertThat(r.status()).isZero();
        MtrTestFile f = r.file();
        int pid = (int) f.pid();
        assertSlots(f.accesses(pid), sweep(r.hex("ARRAY"), 500, r.site(3)));
        List<Event.Exit> exits = f.events(Event.Exit.class);
        assertThat(exits).hasSize(2);
        assertThat(exits.get(0).path()).isEqualTo("/nonexistent/program");
        assertThat(exits.get(1)).isEqualTo(new Event.Exit(pid, Event.ExitKind.NORMAL, 0, 0, 0, ""));
        assertThat(f.end().records()).isEqualTo(500);
    }

    @Test
    void wrappedCallsAreEventsWithTheirArgumentsAndResults() throws Exception {
        Run r = run("calls");
        assertThat(r.status()).isZero();
        assertThat(r.output()).contains("IO 33 33 11 11 5 10");
        MtrTestFile f = r.file();
        int pid = (int) f.pid();
        long a = r.hex("MALLOC"), b = r.hex("CALLOC"), c = r.hex("REALLOC"), d = r.hex("MEMALIGN 0"), e = r.hex("ALIGNED"), m = r.hex("MMAP");
        Map<Long, Event.Alloc> byResult = new HashMap<>();
        for (Event.Alloc x : f.events(Event.Alloc.class)) if (x.result() != 0) byResult.putIfAbsent(x.result(), x);
        assertThat(byResult.get(a).function()).isEqualTo(Event.AllocFunction.MALLOC);
        assertThat(byResult.get(a).args()[0]).isEqualTo(100);
        assertThat(byResult.get(b).function()).isEqualTo(Event.AllocFunction.CALLOC);
        assertThat(byResult.get(b).args()).startsWith(10, 20);
        assertThat(byResult.get(c).function()).isEqualTo(Event.AllocFunction.REALLOC);
        assertThat(byResult.get(c).args()).startsWith(a, 300);
        assertThat(byResult.get(d).function()).isEqualTo(Event.AllocFunction.POSIX_MEMALIGN);
        assertThat(byResult.get(d).args()[1]).isEqualTo(64);
        assertThat(byResult.get(e).function()).isEqualTo(Event.AllocFunction.ALIGNED_ALLOC);
        assertThat(byResult.get(m).function()).isEqualTo(Event.AllocFunction.MMAP);
        assertThat(byResult.get(m).usable()).isEqualTo(8192);
        List<long[]> frees = f.events(Event.Alloc.class).stream().filter(x -> x.function() == Event.AllocFunction.FREE)
                .map(Event.Alloc::args).toList();
        assertThat(frees.stream().map(x -> x[0])).contains(b, c, d, e);
        assertThat(f.events(Event.Alloc.class)).anySatisfy(x -> {
            assertThat(x.function()).isEqualTo(Event.AllocFunction.MUNMAP);
            assertThat(x.args()).startsWith(m, 8192);
        });

        List<Event.Block> blocks = f.events(Event.Block.class);
        assertThat(blocks).extracting(x -> x.op() + (x.syscall() ? " sys" : " fn") + x.what() + " " + x.length())
                .containsExactly("STORE fn3 200", "COPY fn1 150", "COPY fn2 50", "FETCH sys1 33", "STORE sys0 33",
                        "FETCH sys20 5", "FETCH sys20 6", "STORE sys19 4", "STORE sys19 7", "FETCH fn5 20", "STORE fn4 20");
        assertThat(blocks.get(0).destination()).isEqualTo(b);
        assertThat(blocks.get(1).destination()).isEqualTo(c);
        assertThat(blocks.get(1).source()).isEqualTo(b);
        assertThat(blocks.get(2).destination()).isEqualTo(c + 1);
        assertThat(blocks.get(3).source()).isEqualTo(b);
        assertThat(blocks.get(4).destination()).isEqualTo(c);
        assertThat(blocks.get(6).source()).isEqualTo(b + 10);
        assertThat(blocks.get(8).destination()).isEqualTo(c + 20);
        assertThat(blocks).allSatisfy(x -> assertThat(x.tid()).isEqualTo(pid));
        // Stopped: the probe and the memset between stop and start are not there; the probe after start is.
        assertThat(f.accesses(pid)).containsExactly(new Access(c, r.site(1)));
        assertThat(f.events(Event.Control.class)).extracting(Event.Control::start).containsExactly(true, false, true);
        // dlopen: the new module is reported then, after the start-up's modules.
        assertThat(r.output()).contains("DLOPEN ok");
        long lastControl = f.events().stream().filter(t -> t.event() instanceof Event.Control).mapToLong(MtrTestFile.Tagged::sequence).max().orElseThrow();
        assertThat(f.events()).filteredOn(t -> t.event() instanceof Event.Module mod && mod.path().endsWith("libm.so.6"))
                .singleElement().satisfies(t -> assertThat(t.sequence()).isGreaterThan(lastControl));
    }

    @Test
    void withoutAutostartOnlyWhatIsBetweenStartAndStopIsRecorded() throws Exception {
        Run r = run("control", Map.of("MEMTRACE_AUTOSTART", "0"), "50");
        MtrTestFile f = r.file();
        int pid = (int) f.pid();
        assertSlots(f.accesses(pid), sweep(r.hex("ARRAY"), 50, r.site(1)));
        List<Event.Control> controls = f.events(Event.Control.class);
        assertThat(controls).extracting(Event.Control::start).containsExactly(true, false);
        assertThat(controls).allSatisfy(x -> assertThat(x.caller()).isNotZero());
        // The allocation before the start is there: it names the array.
        assertThat(f.events(Event.Alloc.class)).anySatisfy(x -> assertThat(x.result()).isEqualTo(r.hex("ARRAY")));
        assertThat(f.end().records()).isEqualTo(50);
        assertThat(f.end().dropped()).isEqualTo(100);
    }
}
