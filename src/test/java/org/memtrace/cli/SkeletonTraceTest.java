package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.mtr.MtrFile;
import org.memtrace.mtr.MtrReader;
import org.memtrace.mtr.SkeletonTable;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * Lossless skeleton traces (issue 10): the same program built by {@code memtrace cc} and by
 * {@code memtrace cc --skeleton} prints the same trace, raw and symbolic, event for event.
 *
 * <p>What is fair to compare: the two binaries differ in their code (the skeleton build has fewer probes),
 * so code addresses and the offsets in {@code function+N} differ; everything else must not. Both builds
 * put {@code .data} and the read-only segment (whose {@code .rodata} comes first: the constants a kernel
 * loads) at the same addresses ({@code -Wl,-Tdata}, {@code -Wl,-Trodata-segment}), are non-PIE and run without address-space
 * randomization ({@code setarch -R}), so globals, heap blocks and stacks have the same addresses. Each
 * event line is compared with its code field reduced to the function it is in (the raw line takes it from
 * its symbolic twin) and its heap names' call sites to their function. Lines are compared thread by thread,
 * without sequence numbers and thread ids; worker threads' stacks by address too: the runtime's own
 * mappings (its buffers as the pool grows, the unwind tables sized from each build's .eh_frame, its writer
 * thread's stack) lie in a region of their own (rt_init.c) and move none of the program's.
 */
class SkeletonTraceTest {
    @TempDir static Path dir;
    /** Where the programs are built and run: a path of fixed length under {@link #dir} (SkeletonSizeTest). */
    private static Path base;

    private static final Pattern LINE = Pattern.compile("([A-Z])([#$])(\\d+):(.*)");
    private static final Pattern CALL_SITE = Pattern.compile("@([A-Za-z_][\\w.]*)\\+\\d+>");
    private static final Pattern SUMMARY = Pattern.compile("^\\s+(probes|computed|logged)\\s+([\\d,]+)$", Pattern.MULTILINE);

    @BeforeAll
    static void fixture() throws Exception {
        for (String c : List.of("skel_kernels.c", "skel_threads.c", "skel_stacks.c", "skel_workers.c", "skel_shapes.c", "skel_irregular.c", "skel_calls.c", "skel_continue.c", "skel_layout.c", "skel_top.c", "skel_mid.c", "skel_outer.c", "skel_cond.c", "skel_break.c")) {
            try (InputStream in = SkeletonTraceTest.class.getResourceAsStream("/c/" + c)) {
                Files.copy(in, dir.resolve(c));
            }
        }
        base = SkeletonSizeTest.fixedLengthDirectory(dir);
    }

    /** One build's printed trace and the counts its summary gave. */
    record Printed(List<String> lines, Map<String, Long> counts, String stdout, String summary) {}

    /** Where {@link #build} writes a build's trace. */
    private static Path trace(String source, String opt, boolean skeleton) {
        return base.resolve(source + (skeleton ? "skel" : "full") + opt).resolve("prog.mtr");
    }

    private static Printed build(String source, String opt, boolean skeleton) throws Exception {
        Path out = trace(source, opt, skeleton).getParent();
        Files.createDirectories(out);
        List<String> cc = new ArrayList<>(Cli.command("cc"));
        if (skeleton) cc.add("--skeleton");
        cc.addAll(List.of(opt, "-pthread", "-no-pie", "-Wl,-Tdata=0x10000000", "-Wl,-Trodata-segment=0x8000000", "-o", out.resolve("prog").toString(),
                dir.resolve(source).toString()));
        Gcc.run(cc);
        return run(out, "prog", 1024);
    }

    /** A run of the program built in {@code out}, its trace {@code <name>.mtr}, with buffers of {@code bufferKb}. */
    private static Printed run(Path out, String name, int bufferKb) throws Exception {
        Path mtr = out.resolve(name + ".mtr");
        Files.deleteIfExists(mtr);
        String buffers = "MEMTRACE_BUFFER_KB=" + bufferKb;
        // the same process id, an empty environment and a path of fixed length for both builds where
        // namespaces allow (SkeletonSizeTest): the stack's addresses decide where chunks end, so the size
        // comparison holds on every machine only if the stack lies at the same addresses everywhere
        List<String> same = SkeletonSizeTest.sameConditions(Path.of("env"), "-i", "MEMTRACE_OUT=" + mtr, buffers, out.resolve("prog").toString());
        String stdout = Gcc.run(same != null ? same : List.of("setarch", "x86_64", "-R", out.resolve("prog").toString()),
                Map.of("MEMTRACE_OUT", mtr.toString(), "MEMTRACE_BUFFER_KB", Integer.toString(bufferKb)));
        Path text = out.resolve(name + ".trace");
        var printed = Cli.run(dir, "print", "--addresses", "both", "-o", text.toString(), mtr.toString());
        assertThat(printed.status()).as(printed.stderr()).isZero();
        TraceFile.read(text); // every line against the grammar
        Map<String, Long> counts = new LinkedHashMap<>();
        Matcher m = SUMMARY.matcher(printed.stderr());
        while (m.find()) counts.put(m.group(1), Long.parseLong(m.group(2).replace(",", "")));
        return new Printed(Files.readAllLines(text), counts, stdout, printed.stderr());
    }

    /** The event lines, normalized as the class comment says, grouped by thread and sorted as groups. */
    static List<List<String>> comparable(List<String> lines) {
        Map<String, List<String>> byThread = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher raw = LINE.matcher(lines.get(i));
            if (!raw.matches()) continue;
            assertThat(raw.group(2)).as("raw line first: %s", lines.get(i)).isEqualTo("#");
            Matcher sym = LINE.matcher(lines.get(++i));
            assertThat(sym.matches() && sym.group(2).equals("$") && sym.group(3).equals(raw.group(3)))
                    .as("symbolic twin of %s", lines.get(i - 1)).isTrue();
            // a call's stack reference (",sN" after the tid, docs/trace-format.md) names stacks whose frames are code
            // addresses, which differ between the two builds, and numbers them by first use over all threads: dropped
            String[] r = raw.group(4).replaceAll(",s\\d+$", "").split(",", -1);
            String[] s = sym.group(4).replaceAll(",s\\d+$", "").split(",", -1);
            int code = codeField(raw.group(1));
            if (code >= 0) {
                s[code] = s[code].replaceAll("\\+\\d+$", "");
                r[code] = s[code];
            }
            // the tid is the last field only of a raw load or store: a block event ends with its "via"
            int at = tidField(raw.group(1));
            String tid = r[at];
            r[at] = s[at] = "";
            String rawText = raw.group(1) + "#:" + String.join(",", r);
            String symText = CALL_SITE.matcher(sym.group(1) + "$:" + String.join(",", s)).replaceAll("@$1>");
            byThread.computeIfAbsent(tid, t -> new ArrayList<>()).add(rawText);
            byThread.get(tid).add(symText);
        }
        List<List<String>> groups = new ArrayList<>(byThread.values());
        groups.sort((a, b) -> a.toString().compareTo(b.toString()));
        return groups;
    }

    /** The code field of an event line of kind {@code k} (docs/trace-format.md), -1 when it has none. */
    private static int codeField(String k) {
        return switch (k) {
            case "L", "S" -> 2;
            case "W", "G" -> 3;
            case "Y" -> 5;
            default -> -1;
        };
    }

    /** The tid field of an event line of kind {@code k} once its stack reference is dropped (docs/trace-format.md). */
    private static int tidField(String k) {
        return switch (k) {
            case "L", "S", "W", "G" -> 4;
            case "Y" -> 6;
            case "R", "E" -> 3;
            case "F" -> 1;
            default -> 2; // M, C, P, U
        };
    }

    @ParameterizedTest
    @ValueSource(strings = {"-O0", "-O1", "-Os", "-O2", "-O3"})
    void theSkeletonBuildsTraceIsTheFullBuildsEventForEvent(String opt) throws Exception {
        Printed skel = sameTrace("skel_kernels.c", opt, 3); // main and two workers
        long computed = skel.counts().get("computed");
        if (opt.equals("-O0")) {
            // gcc -O0 enters its loops by a jump to a test that loads the counter from the stack: entered in the
            // middle, but with no register stepped
            assertThat(skel.summary()).contains("no induction register").doesNotContain("jump into the body");
            assertThat(computed).isZero();
        } else {
            // the sums' and the stencil's loops are single blocks with constant steps once optimized
            assertThat(computed).as("computed accesses at %s", opt).isGreaterThan(0);
        }
    }

    /** Builds {@code source} both ways, runs both and asserts their traces are the same; the skeleton build's print. */
    private static Printed sameTrace(String source, String opt, int threads) throws Exception {
        Printed full = build(source, opt, false);
        Printed skel = build(source, opt, true);
        assertSame(full, skel, threads);
        assertThat(skel.counts().get("probes")).isEqualTo(full.counts().get("probes"));
        assertThat(full.counts()).doesNotContainKey("computed");
        assertThat(skel.counts().get("logged")).isEqualTo(skel.counts().get("probes") - skel.counts().get("computed"));
        return skel;
    }

    /** Two runs' output and printed traces are the same, thread by thread, as {@link #comparable} compares them. */
    private static void assertSame(Printed expectedRun, Printed actualRun, int threads) {
        assertThat(actualRun.stdout()).isEqualTo(expectedRun.stdout());
        List<List<String>> expected = comparable(expectedRun.lines());
        List<List<String>> actual = comparable(actualRun.lines());
        assertThat(actual).hasSize(threads);
        for (int t = 0; t < expected.size(); t++) {
            List<String> e = expected.get(t), a = actual.get(t);
            for (int i = 0; i < Math.min(e.size(), a.size()); i++)
                assertThat(a.get(i)).as("thread group %d, line %d", t, i).isEqualTo(e.get(i));
            assertThat(a).hasSameSizeAs(e);
        }
    }

    /**
     * Threads made after the main thread wrote many records (skel_stacks.c), each filling and summing an array on
     * its own stack: when each is made, the full build's pool of buffers has grown further than the skeleton
     * build's, and by how far the writer was behind, and each build's unwind tables (malloc's stacks) are sized
     * from its own .eh_frame. With the runtime's mappings where the kernel put them, the threads' stacks lay at
     * other addresses in the two builds' runs and from run to run (the first worker's stack 2 MB apart between
     * the builds and 1 MB between two runs of the full build; with 16 KB buffers 100 KB apart between the builds);
     * in the runtime's region of its own they lie at the same addresses in both builds' runs, in a second run and
     * with 16 KB buffers instead of 1 MB.
     */
    @Test
    void threadsStacksLieWhereTheyLieInEveryBuildAndRun() throws Exception {
        Printed full = build("skel_stacks.c", "-O2", false), skel = build("skel_stacks.c", "-O2", true);
        assertSame(full, skel, 4); // main and three workers
        Path fullDir = trace("skel_stacks.c", "-O2", false).getParent(), skelDir = trace("skel_stacks.c", "-O2", true).getParent();
        for (Printed again : List.of(run(fullDir, "again", 1024), run(fullDir, "small", 16), run(skelDir, "small", 16)))
            assertSame(full, again, 4);
        // the workers' stores to their own stacks are there to compare (fill's 256 each and their calls' pushes), in
        // stacks mapped after the start-up scan: region [unknown]
        long workerStores = skel.lines().stream().filter(l -> l.startsWith("S#") && l.contains(",[unknown],")).count();
        assertThat(workerStores).isBetween(3 * 256L, 3 * 256L + 30);
    }

    /**
     * Three workers at once, each running computed loops and memcpy and memset over blocks of its own
     * (skel_workers.c), as zstd's thread pools do: the threads interleave differently in every run, and so do
     * their block events, whose line ends with its "via" (memcpy, memset), not its tid. Compared thread by thread,
     * by each kind's tid field (a comparison keyed by the last field put the three workers' memsets in one group,
     * in the order they happened to run), the skeleton build's trace and a second run of the full build are the
     * first run's.
     */
    @Test
    void concurrentWorkersCompareThreadByThread() throws Exception {
        Printed full = build("skel_workers.c", "-O2", false), skel = build("skel_workers.c", "-O2", true);
        assertSame(full, skel, 4); // main and three workers
        assertSame(full, run(trace("skel_workers.c", "-O2", false).getParent(), "again", 1024), 4);
        assertThat(skel.counts().get("computed")).isGreaterThan(0);
        // the workers' 4 memcpys and 4 memsets each are there to compare: block events of the threads not main
        String main = skel.lines().stream().filter(l -> l.endsWith(" start parent=0")).findFirst().orElseThrow().split(" ")[2];
        for (String via : List.of("memcpy", "memset"))
            assertThat(skel.lines().stream().filter(l -> l.matches("[WY]#\\d+:.*," + via) && !l.endsWith("," + main + "," + via)).count())
                    .as(via).isEqualTo(12);
    }

    /**
     * Irregular kernels (a pointer chase, a hash table's probes, an insertion sort and qsort's comparisons):
     * what a skeleton computes there (the fills, a strided sum) must not make the trace larger than the full
     * build's. Chunks are cut where the content says, so past the fills both traces have the same chunks
     * (docs/compiled-in.md, "Chunk boundaries"), and both runs have the same process id (SkeletonSizeTest).
     */
    @ParameterizedTest
    @ValueSource(strings = {"-O1", "-O2", "-Os", "-O3"})
    void anIrregularProgramsSkeletonTraceIsNoLargerThanItsFullTrace(String opt) throws Exception {
        Printed skel = sameTrace("skel_irregular.c", opt, 1);
        assertThat(skel.counts().get("computed")).as("computed at %s", opt).isPositive();
        assertThat(Files.size(trace("skel_irregular.c", opt, true))).as("skeleton trace bytes at %s", opt)
                .isLessThanOrEqualTo(Files.size(trace("skel_irregular.c", opt, false)));
    }

    /**
     * The shapes gcc gives loops at -O1 and -Os (a jump to the bottom test, a test at the top and a jump
     * back, the break's side exit) replay exactly, runs of no iteration included, and are computed: main's
     * stores (3 per element, 900), wsum's loads (100 + 0 + 3), isum's (2 × 150) and brk's (251 added, and
     * the one that breaks); the search's loads stay logged (declined: too short to pay).
     */
    @ParameterizedTest
    @ValueSource(strings = {"-O1", "-Os", "-O2"})
    void loopShapesOfEveryOptimizationLevelReplayExactly(String opt) throws Exception {
        Printed skel = sameTrace("skel_shapes.c", opt, 1);
        assertThat(skel.counts().get("computed")).as("computed at %s", opt).isEqualTo(900L + 103 + 300 + 252);
        // find: 78 + 2 loads
        assertThat(skel.counts().get("logged")).as("logged at %s", opt).isGreaterThanOrEqualTo(78L + 2);
    }

    /**
     * Loops that call functions (skel_calls.c): the callee's records, its own skeleton loop's, malloc's and
     * free's events and a recursive run of the same loop come between the loop's positions, and the trace is
     * the full build's. Computed: main's fill (2 stores × 1000) and bump's loop (8 × 100) at every level; nest's
     * accesses around its call to bump (100 iterations: 4 at -O1, 3 at -Os and -O2, where z[i + 2] goes
     * through %rdx, which a call may return a value in); mix's (3 × 1000) at -O1 only (at -Os and -O2 its z[i]
     * goes through %rdx too, and two logged records an iteration for two computed do not pay); tree's two
     * loads in each of its 64 + 32 + … + 1 = 127 iterations at -Os, its call under an if and recursive (at -O2
     * the call's path is a second back edge). churn logs as many as it would compute (malloc, free, p[1]).
     */
    @ParameterizedTest
    @ValueSource(strings = {"-O1", "-Os", "-O2"})
    void loopsThatCallFunctionsReplayExactly(String opt) throws Exception {
        Printed skel = sameTrace("skel_calls.c", opt, 1);
        long expected = switch (opt) {
            case "-O1" -> 2000 + 800 + 400 + 3000;
            case "-Os" -> 2000 + 800 + 300 + 254;
            default -> 2000 + 800 + 300;
        };
        assertThat(skel.counts().get("computed")).as("computed at %s", opt).isEqualTo(expected);
        assertThat(skel.summary()).doesNotContain("call in loop");
    }

    /**
     * Loops with a second jump back to their start (skel_continue.c): the iterations that end there replay
     * exactly, and what follows the continue is computed in the iterations that run it. The data: a[i] =
     * i % 11 + i·7919 % 5, zero first at i = 55 past 3; 510 of the 1000 even; 336 of the 500 even-indexed
     * ones not multiples of 3. Computed: main's fill (1000); skip's load of p[i] in each of 1000 iterations
     * and q[i], p[i + 1] in the 510 even ones; walk's p[i] in 500 + 1 iterations and p[i − 1] in the 336;
     * until_zero's three loads of q in each of its 55 + 3 whole iterations and its loads of p, 55 + 2 at -O1
     * (gcc loads p[i + 1] at the end of the body, and the loop ends before it at i = n) and 56 + 3 at -Os
     * (p[i] at the top). At -O2 gcc carries q's values from one iteration to the next and until_zero, a search
     * with one computed load an iteration, stays logged.
     */
    @ParameterizedTest
    @ValueSource(strings = {"-O1", "-Os", "-O2"})
    void loopsWithAContinueReplayExactly(String opt) throws Exception {
        Printed skel = sameTrace("skel_continue.c", opt, 1);
        long others = 1000 + 1000 + 2 * 510 + 501 + 336;
        long expected = switch (opt) {
            case "-O1" -> others + 3 * 58 + 57;
            case "-Os" -> others + 3 * 58 + 59;
            default -> others;
        };
        assertThat(skel.counts().get("computed")).as("computed at %s", opt).isEqualTo(expected);
        assertThat(skel.summary()).doesNotContain("more than one back edge");
    }

    /**
     * Loops with blocks laid out away from their straight code (skel_layout.c): at -Os a return and a goto
     * from the middle of the body compiled inside the loop's range (the block up to the {@code ret} is taken
     * out of the body and the jump before it becomes a side exit), at -O1/-O2 a cold block placed after the
     * function's {@code ret} that jumps back into the body (spliced into the iteration order). Computed:
     * main's fill (4096 stores); find_first's load and two stores in each of its 500 whole iterations and the
     * load and first store of the one that returns (1502); cold's load and store in 1000 iterations and, in
     * the one where a[i] == 77, the cold block's load and store (2002; at -Os that store's base is a register
     * the body computes, so it stays logged: 2001); at -Os scan's load and store in 803 iterations and the
     * load of the one that leaves (1607); at -O1/-O2 scan is a search whose exit test reads the sum, declined.
     */
    @ParameterizedTest
    @ValueSource(strings = {"-O1", "-Os", "-O2"})
    void loopsWithBlocksLaidOutElsewhereReplayExactly(String opt) throws Exception {
        Printed skel = sameTrace("skel_layout.c", opt, 1);
        long expected = opt.equals("-Os") ? 4096 + 1502 + 1607 + 2001 : 4096 + 1502 + 2002;
        assertThat(skel.counts().get("computed")).as("computed at %s", opt).isEqualTo(expected);
        assertThat(skel.summary()).doesNotContain("exit from the middle").doesNotContain("jump into the body");
    }

    /**
     * Loops tested at the top below code of their own (skel_top.c at -Os): that code runs once more in the
     * iteration the run leaves in, and the replay gives it there. Computed: main's fill (4096 stores);
     * until_negative's load of p[i] (the test's), its two stores and its load of p[i + 1] in 1000 iterations
     * and the load of p[1000] in the one that leaves (4001); forever's load and store in its 500 iterations
     * and the load in the one that leaves (1001); stepped's two loads and store in 500 iterations, its
     * counter stepped before the test (1500). Nothing else is logged but main's and the calls'.
     */
    @Test
    void loopsTestedAtTheTopBelowCodeOfTheirOwnReplayExactly() throws Exception {
        Printed skel = sameTrace("skel_top.c", "-Os", 1);
        assertThat(skel.counts().get("computed")).isEqualTo(4096L + 4001 + 1001 + 1500);
    }

    /**
     * Loops entered in the middle of their body (skel_mid.c): a run's first iteration starts where the entry
     * jump goes, and the replay starts it there, with the updates that iteration skips taken back from the
     * entry values. At -O2 keep_while is entered by a {@code jmp} to its test's load and call, and two_tests
     * by a conditional jump to its second test's load; at -O1 and -Os gcc copies or keeps those tests at the
     * top (nothing new is skeletonized there, and the traces stay the same). Computed at -O2: main's fill
     * (4096 stores); keep_while's two loads and two stores in 500 iterations and the test's load of p[i] in
     * 501 (2501); two_tests's three loads and three stores in 1000 iterations and the test's load in each
     * (7000); ifbody, which gcc -O2 gives two back edges, stays declined. At -O1 two_tests (7000) and ifbody
     * (its load, and its two blocks' two and one accesses under markers in 333 and 667 iterations: 2333); at
     * -Os the same and main's fill.
     */
    @ParameterizedTest
    @ValueSource(strings = {"-O1", "-Os", "-O2"})
    void loopsEnteredInTheMiddleOfTheirBodyReplayExactly(String opt) throws Exception {
        Printed skel = sameTrace("skel_mid.c", opt, 1);
        long expected = switch (opt) {
            case "-O2" -> 4096 + 2501 + 7000;
            case "-O1" -> 7000 + 2333;
            default -> 4096 + 7000 + 2333;
        };
        assertThat(skel.counts().get("computed")).as("computed at %s", opt).isEqualTo(expected);
    }

    /**
     * A loop left by a break on data loaded through the pointer it has just read (skel_break.c, found by
     * bench/corpus.sh in picosat's propl, issue 27): at every level its trace is the full build's. At -O2 gcc
     * enters the loop at its latch and tests the break right after the body's last position, a logged load
     * ({@code cmpb $-1, (%rcx)}): that record moves the run to the next iteration's start before the side
     * exit's marker comes, which names the end of the iteration just done, the same place. The replay once
     * checked the marker's place before folding "after the last position" into "the next iteration's start",
     * took it for an iteration already passed, and read each of the 565 runs that break as not matching.
     */
    @ParameterizedTest
    @ValueSource(strings = {"-O1", "-Os", "-O2"})
    void aLoopLeftByABreakOnLoadedDataReplaysExactly(String opt) throws Exception {
        sameTrace("skel_break.c", opt, 1);
    }

    /**
     * Ifs on the loop's own counters (skel_cond.c): below_k's {@code i < k}, odd's {@code i & 1} (gcc's
     * {@code testb $1, %al}: 8 bits), tri's {@code j <= i}, edges' {@code i > 0 && i < n - 1}, narrow's
     * {@code i != k} on an {@code int} ({@code cmpl}: 32 bits) are computed by the replay, with no marker
     * record; positive's {@code q[i] > 0} is on data and keeps its marker, one record in each of its 999 iterations
     * where q[i] > 0. edges at -O1 tests {@code i > 0} and {@code i < n - 1} by two jumps, the second in a block that
     * is itself conditional: its block's condition is the two compares and-ed; at -Os gcc peels i = 0 and one compare
     * is left; at -O2 it also turns {@code i < n - 1} into the loop's way out (a jump to its latch, whose test
     * leaves by a side exit in the middle of the body: one marker record), and no block is conditional. Everything but main's few calls and printf's argument is computed.
     */
    @ParameterizedTest
    @ValueSource(strings = {"-O1", "-Os", "-O2"})
    void conditionsOnTheLoopsOwnRegistersAreComputed(String opt) throws Exception {
        Printed skel = sameTrace("skel_cond.c", opt, 1);
        long positive = 0;
        for (long i = 0; i < 999; i++) if ((i * 2654435761L >> 7) % 9 - 4 > 0) positive++;
        long[] markers = {0};
        java.util.Set<SkeletonTable.Loop> computing = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        try (MtrFile f = MtrFile.open(trace("skel_cond.c", opt, true))) {
            MtrReader.read(f, e -> {}, (tid, address, site) -> {}, new MtrReader.LoopRecords() {
                @Override public void entry(int tid, SkeletonTable.Loop loop, long bias, int slot, long value) {
                    if (java.util.Arrays.stream(loop.conditions()).anyMatch(java.util.Objects::nonNull)) computing.add(loop);
                }
                @Override public void marker(int tid, int marker, long value) { markers[0]++; }
                @Override public void exit(int tid, long value) {}
            });
        }
        long edges = opt.equals("-O2") ? 1 : 0; // rotated at -O2, it leaves by a side exit in the middle of its body
        assertThat(markers[0]).as("marker records at %s", opt).isEqualTo(positive + edges);
        // below_k, odd, tri, narrow, and edges but at -O2
        assertThat(computing).as("loops with computed conditions at %s", opt).hasSize(opt.equals("-O2") ? 4 : 5);
        assertThat(skel.counts().get("logged")).as("logged at %s", opt).isLessThan(150L);
    }

    /** Two threads in the same skeleton loop at once: each thread's replay gives exactly its own loads, in order. */
    @ParameterizedTest
    @ValueSource(strings = {"-O1", "-O2"})
    void concurrentThreadsReplayTheirOwnLoops(String opt) throws Exception {
        Path exe = dir.resolve("threads" + opt);
        List<String> cc = new ArrayList<>(Cli.command("cc", "--skeleton", opt, "-pthread", "-o", exe.toString(),
                dir.resolve("skel_threads.c").toString()));
        Gcc.run(cc);
        Path mtr = dir.resolve("threads" + opt + ".mtr");
        Gcc.run(List.of(exe.toString()), Map.of("MEMTRACE_OUT", mtr.toString()));
        Path text = dir.resolve("threads" + opt + ".trace");
        var printed = Cli.run(dir, "print", "-o", text.toString(), mtr.toString());
        assertThat(printed.status()).as(printed.stderr()).isZero();
        Map<String, List<Long>> loads = new LinkedHashMap<>();
        for (TraceFile.Line l : TraceFile.read(text).lines()) {
            if (l.type() != 'L' || !l.fields().get(2).startsWith("sum+") || !l.fields().get(0).startsWith("table+")) continue;
            loads.computeIfAbsent(l.fields().get(4), t -> new ArrayList<>()).add(Long.parseLong(l.fields().get(0).substring(6)));
        }
        assertThat(loads).hasSize(2);
        var halves = new ArrayList<Long>();
        for (List<Long> offsets : loads.values()) {
            long base = offsets.getFirst();
            halves.add(base);
            var expected = new ArrayList<Long>();
            for (int r = 0; r < 5; r++) for (int i = 0; i < 2048 - r; i++) expected.add(base + 8L * i);
            assertThat(offsets).isEqualTo(expected);
        }
        assertThat(halves).containsExactlyInAnyOrder(0L, 2048 * 8L);
        Matcher m = SUMMARY.matcher(printed.stderr());
        Map<String, Long> counts = new LinkedHashMap<>();
        while (m.find()) counts.put(m.group(1), Long.parseLong(m.group(2).replace(",", "")));
        assertThat(counts.get("computed")).isGreaterThanOrEqualTo(2L * (5 * 2048 - 10));
    }

    /**
     * Loops with ifs in the body, at -O2 two and three blocks: every access they make is computed (an
     * unconditional one from the iteration, a conditional one from its block's marker), so what stays
     * logged is main's own few accesses, whatever the data make the branches do.
     */
    @Test
    void theAccessesOfLoopsWithIfsAreComputed() throws Exception {
        Path c = dir.resolve("ifs.c");
        Files.writeString(c, """
                #include <stdio.h>
                #define N 4096
                static int a[N], b[N + 1];
                static long out[N];
                static double d[N];
                __attribute__((noinline)) double maxabs(const double *v, long n) {
                    double m = 0;
                    for (long i = 0; i < n; i++) { double x = v[i]; if (x < 0) x = -x; if (x > m) m = x; }
                    return m;
                }
                __attribute__((noinline)) long twoifs(const int *p, const int *q, long *o, long n) {
                    long s = 0;
                    for (long i = 0; i < n; i++) {
                        if (p[i] & 1) s += q[i];
                        if (p[i] & 2) { o[i] = s; s ^= q[i + 1]; }
                    }
                    return s;
                }
                int main(void) {
                    for (long i = 0; i < N; i++) { a[i] = (int) (i * 2654435761u >> 7); b[i] = (int) i; d[i] = (double) (i % 13) - 6; }
                    printf("%f %ld\\n", maxabs(d, N), twoifs(a, b, out, N));
                    return 0;
                }
                """);
        Path exe = dir.resolve("ifs");
        Gcc.run(Cli.command("cc", "--skeleton", "-O2", "-o", exe.toString(), c.toString()));
        Path mtr = dir.resolve("ifs.mtr");
        Gcc.run(List.of(exe.toString()), Map.of("MEMTRACE_OUT", mtr.toString()));
        var printed = Cli.run(dir, "print", "-o", dir.resolve("ifs.trace").toString(), mtr.toString());
        assertThat(printed.status()).as(printed.stderr()).isZero();
        Map<String, Long> counts = new LinkedHashMap<>();
        Matcher m = SUMMARY.matcher(printed.stderr());
        while (m.find()) counts.put(m.group(1), Long.parseLong(m.group(2).replace(",", "")));
        // maxabs: N loads; twoifs: N loads of p plus the branches' q loads and o stores; main's loop: 3N stores
        assertThat(counts.get("probes")).isGreaterThan(5L * 4096);
        assertThat(counts.get("logged")).as(printed.stderr()).isLessThan(50L);
    }

    /**
     * Loop nests (skel_outer.c, docs/compiled-in.md "Loop nests"): an outer loop whose inner loop runs whole in every
     * iteration, entered with registers affine in the outer loop's and left at a value they give, logs the one
     * entry and exit of the nest; the inner loop logs nothing. gcc 12 lays out as such: at -O2 the 2D stencil (the
     * inner pointers {@code lea d(%r8)} of the outer one, the trip register zeroed and compared with 304), the
     * triangle ({@code j < i}: the inner loop's bound {@code rcx} is the outer loop's second induction register) and
     * main's fill of G and T; at -O1 the stencil; at -Os none (its inner loops count in 32-bit registers or are
     * tested with {@code jge}). Row sums keep a guard around the inner loop ({@code testq %rdx,%rdx; jle}) at every
     * level, and the matrix multiply's outer loops step their counters through a copy ({@code leaq 1(%r8),%rax;
     * movq %rax,%r8}): both stay declined (reason 10). Each nest function is called once, so each outer loop with
     * a nest runs once, and no run of its inner loop is in the trace: the stencil's inner loop alone wrote 38
     * runs of 6 records before (5 registers and the exit).
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"-O1, 1", "-Os, 0", "-O2, 3"})
    void outerLoopsRunTheirInnerLoopsWithoutRecordsOfTheirOwn(String opt, int nests) throws Exception {
        Printed skel = sameTrace("skel_outer.c", opt, 1);
        Map<SkeletonTable.Loop, Long> runs = new java.util.IdentityHashMap<>();
        try (MtrFile file = MtrFile.open(trace("skel_outer.c", opt, true))) {
            MtrReader.Result result = MtrReader.read(file, e -> {}, (tid, address, site) -> {}, new MtrReader.LoopRecords() {
                @Override public void entry(int tid, SkeletonTable.Loop loop, long bias, int slot, long value) {
                    if (slot == 0) runs.merge(loop, 1L, Long::sum);
                }
                @Override public void marker(int tid, int marker, long value) {}
                @Override public void exit(int tid, long value) {}
            });
            assertThat(result.problems()).isEmpty();
        }
        var outer = runs.entrySet().stream().filter(e -> !e.getKey().nests().isEmpty()).toList();
        assertThat(outer).hasSize(nests).allSatisfy(e -> assertThat(e.getValue()).isEqualTo(1L));
        for (var e : outer) {
            for (SkeletonTable.Nest n : e.getKey().nests()) {
                assertThat(runs).doesNotContainKey(n.inner()); // its records are the outer loop's to compute
                assertThat(n.inner().items()).allMatch(SkeletonTable.Item::computed);
            }
        }
        if (nests > 0) assertThat(skel.summary()).contains("inner loop in the body"); // row sums and the matrix multiply
        assertThat(skel.counts().get("computed")).isGreaterThan(skel.counts().get("logged"));
    }
}
