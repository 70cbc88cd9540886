package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * A skeleton build does no more work than the full build (issue 10, docs/compiled-in.md "Never slower"),
 * on {@code skel_cost.c} at -O2: a loop whose constant trip count computes fewer accesses per entry than its
 * entry and exit log values is declined with its reason and keeps the full build's probes, instruction for
 * instruction; the same loop with a long constant run is still computed; a gather loop that computes two
 * accesses an iteration and logs one keeps its cursor in a register for the logged one. Either way the
 * skeleton build's trace is the full build's, event for event ({@link SkeletonTraceTest#comparable}).
 */
class SkeletonCostTest {
    @TempDir static Path dir;

    private static final Pattern COUNT = Pattern.compile("^\\s+(probes|computed)\\s+([\\d,]+)$", Pattern.MULTILINE);
    private static final Pattern DECLINED = Pattern.compile("^\\s+(\\d+)\\s+(fewer accesses computed per entry than values logged.*)$",
            Pattern.MULTILINE);
    /** A probe's label numbers differ between the builds (the skeleton has fewer sites before): compared without. */
    private static final Pattern NUMBERED = Pattern.compile("(\\.Lmt_[a-z])\\d+(_\\d+)?");

    /** The summaries of the two builds' traces. */
    private static String full, skel;

    @BeforeAll
    static void builds() throws Exception {
        try (InputStream in = SkeletonCostTest.class.getResourceAsStream("/c/skel_cost.c")) {
            Files.copy(in, dir.resolve("skel_cost.c"));
        }
        full = build("full");
        skel = build("skel");
    }

    /** Builds into directory {@code build} (the program and its instrumented assembly) and runs it; its trace's summary. */
    private static String build(String build) throws Exception {
        Path out = dir.resolve(build);
        Files.createDirectories(out);
        List<String> cc = new ArrayList<>(Cli.command("cc"));
        if (build.equals("skel")) cc.add("--skeleton");
        cc.addAll(List.of("--keep-asm", out.toString(), "-O2", "-no-pie", "-Wl,-Tdata=0x10000000",
                "-Wl,-Trodata-segment=0x8000000", "-o", out.resolve("prog").toString(), dir.resolve("skel_cost.c").toString()));
        Gcc.run(cc);
        return run(out, "prog", 1024);
    }

    /** Runs the build in {@code out} with buffers of {@code kb} and prints its trace to {@code name}.trace; the summary. */
    private static String run(Path out, String name, int kb) throws Exception {
        Path mtr = out.resolve(name + ".mtr");
        // the environment's strings sit above main's stack: runs whose variables differ in length would see
        // the program's locals 16 bytes apart whenever the difference crosses an alignment boundary
        String kbText = Integer.toString(kb);
        Gcc.run(List.of("setarch", "x86_64", "-R", out.resolve("prog").toString()),
                Map.of("MEMTRACE_OUT", mtr.toString(), "MEMTRACE_BUFFER_KB", kbText,
                        "MEMTRACE_TEST_PAD", "x".repeat(32 - name.length() - kbText.length())));
        var printed = Cli.run(dir, "print", "--addresses", "both", "-o", out.resolve(name + ".trace").toString(), mtr.toString());
        assertThat(printed.status()).as(printed.stderr()).isZero();
        TraceFile.read(out.resolve(name + ".trace"));
        return printed.stderr();
    }

    /** Asserts that two printed traces hold the same events ({@link SkeletonTraceTest#comparable}). */
    private static void sameEvents(Path expectedTrace, Path actualTrace) throws Exception {
        List<List<String>> expected = SkeletonTraceTest.comparable(Files.readAllLines(expectedTrace));
        List<List<String>> actual = SkeletonTraceTest.comparable(Files.readAllLines(actualTrace));
        assertThat(actual).hasSize(1);
        for (int i = 0; i < Math.min(expected.getFirst().size(), actual.getFirst().size()); i++)
            assertThat(actual.getFirst().get(i)).as("line %d", i).isEqualTo(expected.getFirst().get(i));
        assertThat(actual.getFirst()).hasSameSizeAs(expected.getFirst());
    }

    /**
     * The instrumented text of {@code function}, label numbers left out, and without instruction labels on a
     * line of their own (the skeleton build labels its declined loops' back edges).
     */
    private static List<String> function(String build, String function) throws Exception {
        List<String> lines = Files.readAllLines(dir.resolve(build).resolve("skel_cost.s"));
        List<String> body = new ArrayList<>();
        boolean in = false;
        for (String l : lines) {
            if (l.equals(function + ":")) in = true;
            if (!in) continue;
            String t = NUMBERED.matcher(l).replaceAll("$1");
            if (!t.equals(".Lmt_i:")) body.add(t);
            if (l.strip().startsWith(".size\t" + function + ",")) break;
        }
        assertThat(body).as("%s in the %s build", function, build).isNotEmpty();
        return body;
    }

    private static long count(String summary, String what) {
        Matcher m = COUNT.matcher(summary);
        while (m.find()) if (m.group(1).equals(what)) return Long.parseLong(m.group(2).replace(",", ""));
        throw new AssertionError("no " + what + " in " + summary);
    }

    /**
     * Computed: main's fills (short3's 400 × 3 stores, long32's 4,096 × 32, idx's and table's 2 × 4,096, lens'
     * 4,096), its sums (out's 4,496 loads; picked's and outv's, vectorized, 1,024 loads of four ints and 2,048
     * of two longs), gather's idx[i] and o[i] (2 × 4,096), rows32's inner loop (4,096 × 32) and its outer loop's
     * o[i] load and store (2 × 4,096: the outer loop runs the inner one whole, docs/compiled-in.md "Loop
     * nests"), rowsv's inner loop (lens[i] = 24 + 7i mod 9 loads a run: 24 × 4,096 + 16,380; its outer loop,
     * whose inner trip count is loaded, logs o[i] and lens[i]). rows3's inner
     * loop (3 iterations, one load each, logs its base, index and exit: 3 values for 3 accesses) is declined
     * and its 1,200 loads logged.
     */
    @Test
    void aLoopOfFewConstantIterationsIsDeclinedAndKeepsTheFullBuildsProbes() throws Exception {
        sameEvents(dir.resolve("full/prog.trace"), dir.resolve("skel/prog.trace"));
        assertThat(count(skel, "probes")).isEqualTo(count(full, "probes"));
        assertThat(count(skel, "computed")).isEqualTo(1200 + 4096 * 32 + 2 * 4096 + 4096 + 4496 + 1024 + 2048 + 2 * 4096 + 4096 * 32 + 2 * 4096
                + 24 * 4096 + 16380);
        Matcher declined = DECLINED.matcher(skel);
        assertThat(declined.find()).as(skel).isTrue();
        assertThat(declined.group(1)).isEqualTo("1");
        assertThat(function("skel", "rows3")).isEqualTo(function("full", "rows3"));
    }

    /**
     * gather's loop keeps the cursor in a register in both builds: the skeleton's entry probe (one group for
     * its three values) stores the cursor before the loop loads it, and its exit probe loads it after the
     * loop stores it; nothing in the loop itself touches the cursor in memory.
     */
    @Test
    void aSkeletonLoopThatLogsKeepsItsCursorInARegister() throws Exception {
        List<String> gather = function("skel", "gather");
        int entry = gather.indexOf(".Lmt_e:"), exit = gather.indexOf(".Lmt_x:");
        assertThat(entry).isPositive();
        assertThat(exit).isGreaterThan(entry);
        List<String> loop = gather.subList(entry + 1, exit);
        long loads = loop.stream().filter(l -> l.matches("\\tmovq %fs:__memtrace_cursor@tpoff, %\\w+")).count();
        long stores = loop.stream().filter(l -> l.matches("\\tmovq %\\w+, %fs:__memtrace_cursor@tpoff")).count();
        // the loop's own load and store, and the exit probe's load and store
        assertThat(loads).isEqualTo(2);
        assertThat(stores).isEqualTo(2);
        assertThat(loop.stream().filter(l -> l.contains("__memtrace_cursor@gottpoff"))).isEmpty();
    }

    /**
     * With buffers of 8 KB the skeleton build's buffer fills many times while rowsv runs, where most records
     * are its inner loop's entry and exit probes' (its trip count is a loaded length, so its outer loop is
     * no nest and every run logs its values): such a probe's first store faults on the guard page and runs
     * again in a new buffer, and the trace holds the same events as with 1 MB.
     */
    @Test
    void entryAndExitProbesThatFillTheBufferLoseNothing() throws Exception {
        String small = run(dir.resolve("skel"), "tiny", 8);
        assertThat(count(small, "computed")).isEqualTo(count(skel, "computed"));
        sameEvents(dir.resolve("skel/prog.trace"), dir.resolve("skel/tiny.trace"));
    }
}
