package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * {@code memtrace skeleton --emit-c} (docs/skeleton-c.md): the emitted C compiles with {@code gcc -O2 -Wall
 * -Werror}, and its output, run on its input, equals {@code memtrace convert --to lackey} of the same trace
 * line for line — for skeleton traces with computed and logged accesses, markers, side exits and threads,
 * and for a full-mode trace, where everything is logged.
 */
class SkeletonEmitTest {
    @TempDir static Path dir;

    private static final Pattern SUMMARY = Pattern.compile("(\\d+) skeleton loops, (\\d+) logged sites; .*: ([\\d,]+) bytes for ([\\d,]+) logged and ([\\d,]+) computed accesses");

    @BeforeAll
    static void fixtures() throws Exception {
        for (String c : List.of("skel_kernels.c", "skel_threads.c", "skel_shapes.c", "skel_irregular.c", "skel_calls.c", "skel_continue.c", "skel_layout.c", "skel_top.c", "skel_mid.c", "skel_outer.c", "skel_cond.c")) {
            try (InputStream in = SkeletonEmitTest.class.getResourceAsStream("/c/" + c)) {
                Files.copy(in, dir.resolve(c));
            }
        }
    }

    /** The trace of {@code source} built with {@code memtrace cc [--skeleton] opt}. */
    private static Path trace(String source, String opt, boolean skeleton) throws Exception {
        Path out = Files.createDirectories(dir.resolve(source + opt + (skeleton ? "-skel" : "-full")));
        List<String> cc = new ArrayList<>(Cli.command("cc"));
        if (skeleton) cc.add("--skeleton");
        cc.addAll(List.of(opt, "-pthread", "-o", out.resolve("prog").toString(), dir.resolve(source).toString()));
        Gcc.run(cc);
        Path mtr = out.resolve("prog.mtr");
        Gcc.run(List.of(out.resolve("prog").toString()), Map.of("MEMTRACE_OUT", mtr.toString()));
        return mtr;
    }

    /** Emits, compiles and runs the skeleton program of {@code mtr}; asserts its lines are convert's. Returns the summary's numbers. */
    private static long[] emitAndCompare(Path mtr) throws Exception {
        Path out = mtr.getParent();
        var lackey = Cli.run(out, "convert", mtr.toString(), "--to", "lackey", "-o", "expected.txt");
        assertThat(lackey.status()).as(lackey.stderr()).isZero();
        var emitted = Cli.run(out, "skeleton", "--emit-c", mtr.toString(), "-o", "skel.c");
        assertThat(emitted.status()).as(emitted.stderr()).isZero();
        assertThat(out.resolve("skel.in")).exists();
        Gcc.run(List.of("gcc", "-O2", "-Wall", "-Werror", "-o", out.resolve("skel").toString(), out.resolve("skel.c").toString()));
        Path actual = out.resolve("actual.txt");
        Process p = new ProcessBuilder(out.resolve("skel").toString(), "skel.in").directory(out.toFile())
                .redirectOutput(actual.toFile()).redirectError(out.resolve("skel.err").toFile()).start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(Files.readString(out.resolve("skel.err"))).isZero();
        List<String> expected = Files.readAllLines(out.resolve("expected.txt"));
        List<String> got = Files.readAllLines(actual);
        assertThat(expected).isNotEmpty();
        for (int i = 0; i < Math.min(expected.size(), got.size()); i++) assertThat(got.get(i)).as("line %d", i + 1).isEqualTo(expected.get(i));
        assertThat(got).hasSameSizeAs(expected);
        Matcher m = SUMMARY.matcher(emitted.stderr());
        assertThat(m.find()).as(emitted.stderr()).isTrue();
        long[] numbers = new long[5];
        for (int i = 0; i < 5; i++) numbers[i] = Long.parseLong(m.group(i + 1).replace(",", ""));
        return numbers;
    }

    @ParameterizedTest
    @CsvSource({
            "skel_kernels.c, -O2",   // sums, a stencil, a matrix multiply, marked blocks; main and two workers one after the other
            "skel_kernels.c, -O1",   // loops entered at their test, rotated loops
            "skel_irregular.c, -O2", // pointer chasing, a hash table, sorts: mostly logged, the fills computed
            "skel_shapes.c, -Os",    // tested at the top, runs with no iteration, a break (side exit)
            "skel_threads.c, -O2",   // two threads in the same loop at the same time
            "skel_continue.c, -O1",  // a continue: what follows it runs under a marker
            "skel_layout.c, -Os",    // a return from the middle of the body: its block taken out, the jump before it a side exit
            "skel_layout.c, -O2",    // a cold block laid out after the function, spliced into the iteration
            "skel_top.c, -Os",       // tested at the top below code that the last iteration runs
            "skel_mid.c, -O2"})      // entered in the middle of the body, by a jmp and by a conditional jump
    void theEmittedProgramPrintsTheTracesAccessesLineForLine(String source, String opt) throws Exception {
        long[] n = emitAndCompare(trace(source, opt, true));
        assertThat(n[0]).as("loops").isGreaterThan(0);
        assertThat(n[4]).as("computed").isGreaterThan(0);
        String c = Files.readString(dir.resolve(source + opt + "-skel").resolve("skel.c"));
        // every loop that ran is a function whose statements compute its addresses
        assertThat(Pattern.compile("^static void loop\\d+\\(void\\)$", Pattern.MULTILINE).matcher(c).results().count()).isEqualTo(n[0]);
        assertThat(c).containsPattern("for \\(uint64_t k = 0; k < n; k\\+\\+\\)").containsPattern("load\\(0x[0-9a-f]+, r[a-z0-9]+");
        // and its comment names the function it is in
        assertThat(c).containsPattern("/\\* Loop 0, \\w+\\+0x[0-9a-f]+ in prog: entered at 0x");
    }

    /**
     * Ifs on the loops' own registers (skel_cond.c): the program computes them with {@code holds} (cmp and test
     * at 8, 32 and 64 bits) where the trace has no marker, and prints what convert prints.
     */
    @ParameterizedTest
    @ValueSource(strings = {"-O1", "-Os", "-O2"})
    void computedConditionsAreEmittedLineForLine(String opt) throws Exception {
        long[] n = emitAndCompare(trace("skel_cond.c", opt, true));
        assertThat(n[4]).as("computed").isGreaterThan(0);
        String c = Files.readString(dir.resolve("skel_cond.c" + opt + "-skel").resolve("skel.c"));
        assertThat(c).containsPattern("const int block\\d+ = holds\\(2, 1, 4, 0, r[a-z0-9]+, \\(uint64_t\\) 1\\);") // odd's testb $1, %al; je
                .containsPattern("holds\\(1, 4, ") // narrow's cmpl
                .containsPattern(opt.equals("-O1") ? "\\) && holds\\(" : "holds") // edges' two ifs at -O1
                .containsPattern("= marker\\("); // positive's, on data
    }

    @Test
    void aFullModeTraceIsAllLogged() throws Exception {
        long[] n = emitAndCompare(trace("skel_kernels.c", "-O2", false));
        assertThat(n[0]).as("loops").isZero();
        assertThat(n[4]).as("computed").isZero();
        assertThat(n[3]).as("logged").isGreaterThan(30_000);
    }

    /**
     * Loops with a call in their body (skel_calls.c): the callee's records, its own loop's runs, malloc's and
     * free's and a recursive run of the same loop come between the loop's positions, and the program prints
     * them there, as convert does.
     */
    @ParameterizedTest
    @ValueSource(strings = {"-O1", "-Os", "-O2"})
    void loopsThatCallFunctionsAreEmittedLineForLine(String opt) throws Exception {
        long[] n = emitAndCompare(trace("skel_calls.c", opt, true));
        assertThat(n[4]).as("computed").isGreaterThan(0);
        String c = Files.readString(dir.resolve("skel_calls.c" + opt + "-skel").resolve("skel.c"));
        assertThat(c).containsPattern("logged\\(0x[0-9a-f]+\\); callee\\(\\);");
    }

    /**
     * Loop nests (skel_outer.c): an outer loop's function writes its inner loop where it runs, as a nested C loop
     * whose registers start at values of the outer loop's and whose trip count follows from them, and prints what
     * convert prints.
     */
    @ParameterizedTest
    @ValueSource(strings = {"-O1", "-O2"})
    void loopNestsAreEmittedAsNestedLoops(String opt) throws Exception {
        long[] n = emitAndCompare(trace("skel_outer.c", opt, true));
        assertThat(n[4]).as("computed").isGreaterThan(n[3]);
        String c = Files.readString(dir.resolve("skel_outer.c" + opt + "-skel").resolve("skel.c"));
        assertThat(c).contains("inner loops run whole").contains("for (uint64_t k_1 = 0; k_1 < n_1; k_1++) {");
    }

    @Test
    void aTraceWhoseProgramIsGoneIsRefusedInOneLine() throws Exception {
        Path mtr = trace("skel_shapes.c", "-O2", true);
        Path moved = Files.move(mtr, dir.resolve("orphan.mtr"));
        Files.delete(mtr.resolveSibling("prog"));
        var r = Cli.run(dir, "skeleton", "--emit-c", moved.toString(), "-o", "orphan.c");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.stderr()).startsWith("memtrace: ").contains("no site table").hasLineCount(1);
        assertThat(dir.resolve("orphan.c")).doesNotExist();
        assertThat(dir.resolve("orphan.in")).doesNotExist();
    }

    @Test
    void badArgumentsAreOneLine() throws Exception {
        Path notTrace = Files.writeString(dir.resolve("not.mtr"), "hello, world\n");
        var r = Cli.run(dir, "skeleton", "--emit-c", notTrace.toString(), "-o", "x.c");
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.stderr()).startsWith("memtrace: ").hasLineCount(1);

        Path mtr = trace("skel_shapes.c", "-O1", true);
        r = Cli.run(dir, "skeleton", "--emit-c", mtr.toString(), "-o", dir.resolve("no/such/dir/x.c").toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.stderr()).startsWith("memtrace: cannot write").hasLineCount(1);

        r = Cli.run(dir, "skeleton", "--emit-c", mtr.toString(), "-o", "x.c", "--input", "x.c");
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.stderr()).startsWith("memtrace: ").contains("--input").hasLineCount(1);

        r = Cli.run(dir, "skeleton", mtr.toString(), "-o", "x.c");
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.stderr()).startsWith("memtrace: ").contains("--emit-c").hasLineCount(1);
    }
}
