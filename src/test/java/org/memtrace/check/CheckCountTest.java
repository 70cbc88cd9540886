package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Gcc;

/**
 * The summary counts the inline checks that ran, exactly, though the rewriter counts a run of them at once at its
 * first (InlineChecks.runs): a check that stops the program takes the checks of its run that never ran back off
 * (the {@code nopl} mark after its slow call, check_shadow.c). It counts those of a thread that never calls the
 * runtime, ended or still running at exit, and as libc calls only the program's, not the runtime's own (its
 * start-up, its reports) nor, in a rewrite run, the tracing runtime's.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckCountTest {
    private static final Pattern SUMMARY = Pattern.compile("memtrace: check summary: (\\d+) accesses checked by (\\d+) checks "
            + "\\(0 loop entries, 0 block ranges, (\\d+) libc calls\\); statically 0 of 3 checks removed .*; (\\d+) errors?");
    Path dir;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        CheckBuilds.fixture(dir, "run_count.c");
        CheckBuilds.build(dir, false, true, "-O2", "-g", "-o", "run_count", "run_count.c");
        CheckBuilds.fixture(dir, "thread_count.c");
        CheckBuilds.build(dir, false, true, "-O2", "-g", "-pthread", "-o", "thread_count", "thread_count.c");
        Process p = new ProcessBuilder("gcc", "-O0", "-g", "-pthread", "-o", "thread_count-plain", "thread_count.c")
                .directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(out).isZero();
    }

    private static final Pattern COUNTS = Pattern.compile("memtrace: check summary: (\\d+) accesses checked by (\\d+) checks "
            + "\\(\\d+ loop entries, \\d+ block ranges, (\\d+) libc calls\\); .*; (\\d+) errors?");

    /** The summary's {checks but libc calls (the inline ones), libc calls} of a run, with the errors expected. */
    private static long[] counts(CheckBuilds.Run r, int errors) {
        Matcher m = COUNTS.matcher(r.stderr().lines().filter(l -> l.startsWith("memtrace: check summary: ")).findFirst().orElse(""));
        assertThat(m.matches()).as(r.stderr()).isTrue();
        assertThat(Integer.parseInt(m.group(4))).as(r.stderr()).isEqualTo(errors);
        return new long[] {Long.parseLong(m.group(2)) - Long.parseLong(m.group(3)), Long.parseLong(m.group(3))};
    }

    /** Inline checks the summary counted: its checks less its libc calls (each access one check). */
    private long inline(String mode, String index, int errors) throws Exception {
        CheckBuilds.Run r = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK", mode), "./run_count", index);
        Matcher m = SUMMARY.matcher(r.stderr().lines().reduce((a, b) -> b).orElse(""));
        assertThat(m.matches()).as(r.stderr()).isTrue();
        assertThat(m.group(1)).isEqualTo(m.group(2));
        assertThat(Integer.parseInt(m.group(4))).isEqualTo(errors);
        return Long.parseLong(m.group(2)) - Long.parseLong(m.group(3));
    }

    @Test
    void aRunIsCountedOnceAndAStopUncountsWhatItsRunDidNotReach() throws Exception {
        String code = Gcc.run(List.of("objdump", "-d", "--no-show-raw-insn", dir.resolve("run_count").toString()));
        assertThat(code).as("a[i] and b[j]: one run of two, counted at once").contains("addq   $0x2,%fs:(%rcx)")
                .contains("nopl   0x6d740001(%rax)");
        assertThat(inline("summary", "15", 0)).isEqualTo(3);
        assertThat(inline("summary", "16", 1)).as("stopped at a[16]: b[j] never checked").isEqualTo(2);
        assertThat(inline("continue", "16", 1)).isEqualTo(3);
    }

    /**
     * thread_count.c: a thread whose only checks are two()'s run of two, counted inline (no call of the runtime),
     * adds 2 whether main joined it or it still runs at exit; before, the running one's were lost, and a joined one's
     * kept only because the runtime's own libc calls in the thread registered it. The one libc call is strlen's.
     */
    @Test
    void threadsThatNeverCallTheRuntimeAreCountedAndLibcCallsAreTheProgramsOnly() throws Exception {
        long[] none = counts(CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK", "summary"), "./thread_count", "3", "0"), 0);
        long[] joined = counts(CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK", "summary"), "./thread_count", "3", "1"), 0);
        long[] running = counts(CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK", "summary"), "./thread_count", "3", "2"), 0);
        assertThat(joined[0]).as("a joined thread's two checks").isEqualTo(none[0] + 2);
        assertThat(running[0]).as("a running thread's two checks").isEqualTo(none[0] + 2);
        assertThat(none[1]).as("strlen(argv[1]), not the runtime's start-up strcmp and memset").isEqualTo(1);
        assertThat(joined[1]).isEqualTo(1);
        assertThat(running[1]).isEqualTo(1);
        // a report in continue mode formats, looks names up and flushes: none of it is the program's
        long[] reported = counts(CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK", "continue"), "./thread_count", "16", "1"), 1);
        assertThat(reported).containsExactly(none[0] + 2, 1);
    }

    /** A rewrite run: the tracing runtime's libc calls bind to the check runtime's wrappers too, and are not counted. */
    @Test
    void aRewriteRunCountsTheProgramsLibcCallsOnly() throws Exception {
        for (String[] c : List.of(new String[] {"3", "0"}, new String[] {"3", "1"}, new String[] {"16", "0"})) {
            CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of("--mode", "rewrite"),
                    Map.of("MEMTRACE_CHECK", c[0].equals("16") ? "continue" : "summary"), "./thread_count-plain", c[0], c[1]);
            assertThat(counts(r, c[0].equals("16") ? 1 : 0)[1]).as(r.stderr()).isEqualTo(1);
        }
    }
}
