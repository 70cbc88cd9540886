package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.InstructionTally;
import org.memtrace.testutil.LackeyComparison;
import org.memtrace.testutil.TraceFile;

/**
 * Rewrite mode's trace against Valgrind Lackey's, per thread and per instruction (module + offset), libc, ld.so
 * after start-up and the stack included (docs/rewriting.md, "Compared with Lackey"): the bench kernels at small sizes, gzip,
 * sqlite3 and python3 on short inputs. Every instruction both run in the compared window has the same loads
 * and stores (a rep string instruction: the same bytes) and the same ordered accesses; the differences expected
 * by design are excluded by name and counted in the printed row ({@link LackeyComparison.Outcome#row}).
 */
class RewriteLackeyTest {
    @TempDir Path dir;

    /** A bench kernel shrunk by replacing {@code from} with {@code to} in its source (Lackey is 10^4× native). */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "gemm|#define N 256|#define N 24||",
        "hash|600000|3000|3000000|6000",
        "stencil|#define N 512|#define N 40||",
        "chase|#define N (1 << 18)|#define N (1 << 9)||",
        "qsort|#define N (1 << 20)|#define N (1 << 10)||",
        "heap|< 20;|< 3;||",
        "threads|#define N 16384|#define N 512||"})
    void benchKernelsEqualLackeysPerInstruction(String name, String from, String to, String from2, String to2) throws Exception {
        String only = System.getProperty("lackey.only");
        Assumptions.assumeTrue(only == null || List.of(only.split(",")).contains(name), "-Dlackey.only=" + only);
        String source = Files.readString(Path.of("bench/programs", name + ".c")).replace(from, to);
        if (from2 != null) source = source.replace(from2, to2);
        Files.writeString(dir.resolve(name + ".c"), source);
        Path prog = dir.resolve(name);
        Gcc.run(List.of("gcc", "-O2", "-g", "-o", prog.toString(), dir.resolve(name + ".c").toString(), "-lpthread"));
        var o = LackeyComparison.compare(name, dir, List.of(prog.toString()), Map.of(), null);
        // counts equal everywhere; addresses equal in the executable. In libc some differ where heap blocks lie
        // elsewhere relative to each other (threads: the runtime is a TLS module, so each thread's DTV, calloc'ed
        // by pthread_create, is 16 bytes longer; qsort: 2 instructions of memmove, not explained yet)
        print(o);
        assertThat(o.compared()).as("instructions compared").isPositive();
        assertThat(o.differences()).doesNotContainKey("left by the plan, yet recorded");
        // ld.so after start-up is compared (lazy binding of the kernel's libc calls), not excluded
        assertThat(o.ldSoCompared()).as("ld.so's instructions compared").isPositive();
        assertThat(o.excluded().keySet()).noneMatch(k -> k.contains("ld.so"));
        if (name.equals("threads")) {
            // not yet asserted further: in one run of three, a worker's start (start_thread, __ctype_init, its first
            // loop iterations) fell to the other worker's number under Lackey, as if a SCHED line and the trace lines
            // around it came out of order; the rows of the runs are in docs/rewriting.md
            return;
        }
        assertThat(o.unexpected().keySet()).as(String.join("\n", o.examples())).isSubsetOf(Set.of("addresses differ", "counts differ"));
        // threads: libc's switch to multi-threaded mode in the first pthread_create (_IO_enable_locks and the block
        // before it: 4 instructions) runs twice under Valgrind, once rewritten; not explained yet
        assertThat(o.unexpected().getOrDefault("counts differ", 0)).isLessThanOrEqualTo(name.equals("threads") ? 4 : 0);
        assertThat(o.unexpected().getOrDefault("addresses differ", 0)).as("addresses differ").isLessThanOrEqualTo(ADDRESSES.get(name));
        assertThat(o.inExecutable()).as("differences in the executable's instructions").isZero();
    }

    /**
     * Threads whose work is known exactly (rewrite_lackey_threads.c: 3 workers, each adding into its own array
     * 600 * (k + 1) times in a function of its own, while main adds into mains[] 900 times): in memtrace's trace each
     * array's loads and stores are all there, once, in the thread that made them; and each worker function's
     * accesses, summed over the threads, equal Lackey's per instruction, in the worker's own thread on both sides.
     * A thread whose buffer is lost, written twice or given another thread's id fails here.
     */
    @Test
    void threadsRecordTheirOwnAccessesOnceAndEqualLackeys() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_lackey_threads.c", "lt", "-O2", "-g", "-no-pie");
        String nativeOut = Gcc.run(List.of(prog.toString()));
        assertThat(nativeOut).isEqualTo("sum 2922750\n");
        Map<String, Long> at = new HashMap<>(), size = new HashMap<>();
        for (ElfSymbol s : ElfFile.read(prog).symtab()) {
            at.put(s.name(), s.value());
            size.put(s.name(), s.size());
        }

        Path trace = dir.resolve("lt.trace");
        var r = Cli.run(dir, "run", "--mode", "rewrite", "--addresses", "raw", "-q", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo(nativeOut);
        TraceFile t = TraceFile.read(trace);
        // "array tid": loads and stores; arrays cells0..cells2 and mains, 512 bytes each
        Map<String, long[]> counts = new TreeMap<>();
        long cells = at.get("cells"), mains = at.get("mains");
        for (var l : t.lines()) {
            if (!l.access()) continue;
            long a = l.number(0);
            String array = a >= cells && a < cells + 3 * 512 ? "cells" + (a - cells) / 512 : a >= mains && a < mains + 512 ? "mains" : null;
            if (array != null) counts.computeIfAbsent(array + " " + l.field(4), k -> new long[2])[l.type() == 'L' ? 0 : 1]++;
        }
        String main = t.comments().stream().filter(c -> c.startsWith("agent pid=")).map(c -> c.replaceAll("agent pid=(\\d+) .*", "$1"))
                .findFirst().orElseThrow();
        List<String> started = t.comments().stream().filter(c -> c.matches("thread \\d+ start parent=" + main)).map(c -> c.split(" ")[1]).toList();
        assertThat(started).as("the workers' thread lines").hasSize(3).doesNotContain(main).doesNotHaveDuplicates();
        Set<String> workers = new HashSet<>();
        for (int k = 0; k < 3; k++) {
            int k_ = k;
            var mine = counts.entrySet().stream().filter(e -> e.getKey().startsWith("cells" + k_ + " ") && !e.getKey().endsWith(" " + main)).toList();
            assertThat(mine).as("cells%d: one worker thread", k).hasSize(1);
            assertThat(mine.getFirst().getValue()).as("cells%d: its worker's loads and stores", k).containsExactly(600L * (k + 1), 600L * (k + 1));
            workers.add(mine.getFirst().getKey().split(" ")[1]);
            assertThat(counts.get("cells" + k + " " + main)).as("cells%d: main's sum", k).containsExactly(64, 0);
        }
        assertThat(workers).as("three workers, each a thread of its own").containsExactlyInAnyOrderElementsOf(started);
        assertThat(counts.keySet().stream().filter(k -> k.startsWith("mains "))).containsExactly("mains " + main);
        assertThat(counts.get("mains " + main)).as("main's loop and sum").containsExactly(900 + 64, 900);

        var o = LackeyComparison.compare("lackey threads", dir, List.of(prog.toString()), Map.of(), null);
        print(o);
        assertThat(o.compared()).as("instructions compared").isPositive();
        assertThat(o.differences()).doesNotContainKey("left by the plan, yet recorded");
        assertThat(o.ldSoCompared()).as("ld.so's instructions compared").isPositive();
        // each instruction of the executable, its loads and stores over all threads: equal (Lackey runs one thread
        // at a time, which changes who waits where in libc, never what the program's own code does)
        String exe = prog.getFileName().toString();
        Map<String, long[]> lackey = sums(o.lackeyThreads(), exe), memtrace = sums(o.memtraceThreads(), exe);
        assertThat(memtrace.keySet()).isEqualTo(lackey.keySet());
        for (var e : lackey.entrySet()) assertThat(memtrace.get(e.getKey())).as(e.getKey()).containsExactly(e.getValue());
        // a worker function's accesses (its loop's, its call's push and its ret's load): in the thread created
        // k-th, nowhere else. Asserted on memtrace's side only: Lackey's thread of an access comes from Valgrind's
        // SCHED lines, and in one run of the threads kernel a worker's start fell to the other worker there
        // (docs/rewriting.md), which would make this test fail on Lackey's account, not memtrace's.
        for (int k = 0; k < 3; k++) {
            long lo = at.get("work" + k), hi = lo + size.get("work" + k);
            long n = 600L * (k + 1) + 1;
            for (var side : List.of(o.memtraceThreads())) {
                String which = "memtrace";
                for (int th = 0; th < side.size(); th++) {
                    long[] sum = new long[2];
                    for (var e : side.get(th).entrySet()) {
                        if (!e.getKey().startsWith(exe + "+")) continue;
                        long ip = Long.parseUnsignedLong(e.getKey().substring(exe.length() + 1), 16);
                        if (ip < lo || ip >= hi) continue;
                        sum[0] += e.getValue().loads;
                        sum[1] += e.getValue().stores;
                    }
                    assertThat(sum).as("%s: work%d's accesses in thread %d", which, k, th).containsExactly(th == k + 1 ? new long[] {n, n} : new long[2]);
                }
            }
        }
    }

    /** Per instruction of {@code exe}, its loads and stores summed over the threads. */
    private static Map<String, long[]> sums(List<Map<String, InstructionTally.Site>> threads, String exe) {
        Map<String, long[]> out = new TreeMap<>();
        for (var thread : threads)
            for (var e : thread.entrySet())
                if (e.getKey().startsWith(exe + "+")) {
                    long[] c = out.computeIfAbsent(e.getKey(), k -> new long[2]);
                    c[0] += e.getValue().loads;
                    c[1] += e.getValue().stores;
                }
        return out;
    }

    /**
     * The most instructions whose ordered accesses may differ from Lackey's unexpectedly, per program (named through
     * the mappings, InstructionTally; measured: docs/rewriting.md, "Compared with Lackey").
     */
    private static final Map<String, Integer> ADDRESSES = Map.of("gemm", 2, "hash", 2, "stencil", 2, "chase", 2, "qsort", 2, "heap", 2,
            "threads", 60, "gzip -c", 4, "sqlite3", 40, "python3 -S", 300);
    /** python3's bound when no control run fell on Lackey's side of its placement dependence (measured 2,758-2,766). */
    private static final int PYTHON_ONE_WAY = 3_000;

    @Test
    void gzipOfASmallFileEqualsLackeysPerInstruction() throws Exception {
        Path input = dir.resolve("input.txt");
        Files.writeString(input, Files.readString(Path.of("docs/rewriting.md")).substring(0, 6000));
        assertMostlyEqual(LackeyComparison.compare("gzip -c", dir, List.of(which("gzip"), "-c", input.toString()), Map.of(), null));
    }

    @Test
    void sqlite3OnASmallScriptEqualsLackeysPerInstruction() throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/sqlite3")),
                "sqlite3 is not installed (apt-get install sqlite3; scripts/env.sh installs it for the tests)");
        Path sql = dir.resolve("s.sql");
        Files.writeString(sql, """
                create table t(k integer primary key, v text);
                insert into t(v) values ('a'), ('bb'), ('ccc'), ('dddd');
                select count(*), sum(length(v)) from t where k > 1;
                """);
        assertMostlyEqual(LackeyComparison.compare("sqlite3", dir, List.of("/usr/bin/sqlite3", ":memory:"), Map.of(), sql));
    }

    @Test
    void python3RunningASmallLoopEqualsLackeysPerInstruction() throws Exception {
        assertMostlyEqual(LackeyComparison.compare("python3 -S", dir,
                List.of("/usr/bin/python3", "-S", "-c", "print(sum(i * i for i in range(50)))"), Map.of("PYTHONHASHSEED", "0"), null));
    }

    private static String which(String program) {
        for (String d : System.getenv("PATH").split(":"))
            if (Files.isExecutable(Path.of(d, program))) return Path.of(d, program).toString();
        throw new IllegalStateException(program + " not on PATH");
    }

    private static void print(LackeyComparison.Outcome o) {
        System.out.println(o.row());
        o.examples().forEach(e -> System.out.println("  " + e));
    }

    /**
     * The system's programs: nothing the plan leaves is recorded, and the loads and stores of all but 2 % of the
     * instructions equal Lackey's but for the expected differences (measured, the PLT swept: gzip 8 of 1,308,
     * sqlite3 28 of 17,542, python3 728 of 47,184). What differs beyond the expected is listed in docs/rewriting.md ("Left").
     */
    private static void assertMostlyEqual(LackeyComparison.Outcome o) {
        print(o);
        assertThat(o.compared()).as("instructions compared").isPositive();
        assertThat(o.ldSoCompared()).as("ld.so's instructions compared").isPositive();
        assertThat(o.differences()).doesNotContainKey("left by the plan, yet recorded");
        long counts = o.unexpected().entrySet().stream().filter(e -> !e.getKey().equals("addresses differ")).mapToLong(Map.Entry::getValue).sum();
        // a program whose work depends on where its memory lies differs from itself between native runs (python3:
        // LackeyComparison.PLACED); that is counted apart, and what is left must be small
        assertThat(counts).as("instructions whose loads and stores differ from Lackey's unexpectedly").isLessThanOrEqualTo(o.compared() / 50);
        // python3 works one of two ways by placement (docs/rewriting.md, "Placement, measured"): Lackey's run and
        // some native ones one way, setarch -R's the other, about 2,800 instructions apart. Unless a control run fell
        // on the other way (and so named them: 2,000 or more placed), the compared run's differences are bounded by that
        int bound = ADDRESSES.get(o.program());
        if (o.program().startsWith("python3") && o.placed() < 2_000) bound = PYTHON_ONE_WAY;
        assertThat(o.unexpected().getOrDefault("addresses differ", 0)).as("instructions whose ordered accesses differ from Lackey's unexpectedly")
                .isLessThanOrEqualTo(bound);
    }
}
