package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * {@code memtrace run --record-only FILE}: the recording kept undecoded, read later by {@code print} into the
 * same loads and stores a normal run writes; what needs decoding is refused; a cut-short recording is said.
 */
class RecordOnlyTest {
    @TempDir static Path dir;
    static Path loop, killed;

    @BeforeAll
    static void build() throws Exception {
        loop = Gcc.compile(dir, "rw_loop.c", "rw_loop", "-g");
        killed = Gcc.compile(dir, "killed_self.c", "killed_self", "-g");
    }

    @Test
    void aRewriteModeRecordingPrintsTheAccessesOfANormalRun() throws Exception {
        recordedEqualsNormal("rewrite");
    }

    @Test
    void aFaultModeRecordingPrintsTheAccessesOfANormalRun() throws Exception {
        recordedEqualsNormal("fault");
    }

    /** Both runs without address randomization: the accesses are the same but for the thread id. */
    private static void recordedEqualsNormal(String mode) throws Exception {
        Path file = dir.resolve(mode + ".rec"), text = dir.resolve(mode + ".txt");
        Cli.Result r = Cli.runWithoutAslr(dir, "run", "--mode", mode, "--record-only", file.toString(), "--", loop.toString());
        assertThat(r.status()).as(r.stderr()).isEqualTo(3);
        String line = r.stderr().lines().filter(l -> l.startsWith("memtrace: recorded ")).findFirst().orElseThrow(() -> new AssertionError(r.stderr()));
        assertThat(line).matches("memtrace: recorded [1-9][0-9]* records, " + Files.size(file) + " bytes in " + java.util.regex.Pattern.quote(file.toString())
                + "; the program exited with status 3; memtrace print " + java.util.regex.Pattern.quote(file.toString())
                + " reads it \\(so do report, cachesim and convert\\)");
        assertThat(r.stderr()).doesNotContain("summary", "loads", "incomplete");
        assertThat(r.stdout()).startsWith("36 37 7 ");
        Cli.Result normal = Cli.runWithoutAslr(dir, "run", "--mode", mode, "-q", "-o", text.toString(), "--", loop.toString());
        assertThat(normal.status()).as(normal.stderr()).isEqualTo(3);
        Cli.Result printed = Cli.run(dir, "print", file.toString());
        assertThat(printed.status()).as(printed.stderr()).isZero();
        // rewrite mode's environment names temporary files (the dlopen socket) whose names vary in length: the
        // kernel copies the environment to the stack's top, so offsets in the stack move between any two runs
        boolean stackMoves = mode.equals("rewrite");
        List<String> expected = accesses(Files.readAllLines(text), stackMoves);
        assertThat(expected).hasSizeGreaterThan(100).anyMatch(l -> l.startsWith("S")).anyMatch(l -> l.contains("table"));
        assertThat(accesses(printed.stdout().lines().toList(), stackMoves)).isEqualTo(expected);
    }

    /** A line of libc's vector string functions: their source file, or their name when libc has no line table. */
    private static final java.util.regex.Pattern VECTOR_STRING =
            java.util.regex.Pattern.compile("sysdeps/x86_64/multiarch/|^[^,]*,[^,]*,__\\w+_(evex|avx2|sse2|sse4_2)\\w*\\+");

    /**
     * The L and S lines, their thread id (the fifth field: address, region, code, size, tid[, lines]) left out; where
     * the stack moves, also the stack offset, and the accesses of libc's vector string functions (sysdeps/x86_64/
     * multiarch): how many loads {@code strrchr} makes of {@code argv[0]} depends on the string's alignment, which
     * moves with the lengths of the run's temporary names and pid in the environment (the sequence numbers dropped
     * with them).
     */
    private static List<String> accesses(List<String> trace, boolean stackMoves) {
        return trace.stream().filter(l -> l.startsWith("L$") || l.startsWith("S$"))
                .filter(l -> !stackMoves || !VECTOR_STRING.matcher(l).find())
                .map(l -> l.replaceFirst("^([^,]*,[^,]*,[^,]*,[^,]*,)[0-9]+(,|$)", "$1tid$2"))
                .map(l -> stackMoves ? l.replaceFirst("^([LS])\\$[0-9]+:", "$1:").replaceFirst(":\\[stack\\]\\+[0-9]+,", ":[stack],") : l)
                .toList();
    }

    @Test
    void aProgramKilledBySigkillLeavesARecordingSaidIncomplete() throws Exception {
        Path file = dir.resolve("killed.rec");
        Cli.Result r = Cli.run(dir, "run", "--mode", "rewrite", "--record-only", file.toString(), "--", killed.toString(), "9");
        assertThat(r.status()).as(r.stderr()).isEqualTo(137);
        assertThat(r.stderr()).contains("memtrace: recorded " + Files.size(file) + " bytes in " + file + ", incomplete: "
                + "the program was killed by SIGKILL before it could record its end: the trace ends there or earlier; "
                + "the program was killed by SIGKILL (signal 9); memtrace print " + file + " reads it");
    }

    @Test
    void aRawExitLeavesARecordingSaidIncompleteAndStatusOne() throws Exception {
        Path file = dir.resolve("exit.rec");
        Cli.Result r = Cli.run(dir, "run", "--mode", "rewrite", "--record-only", file.toString(), "--", killed.toString(), "exit");
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        assertThat(r.stderr()).contains(", incomplete: the program ended without recording its end", "; the program exited with status 0; ");
    }

    @Test
    void whatNeedsTheEventsDecodedIsRefusedInOneLine() throws Exception {
        Path file = dir.resolve("refused.rec");
        String rec = file.toString(), prog = loop.toString();
        assertRefused(Cli.run(dir, "run", "--record-only", rec, "--check", "--", prog),
                "memtrace: --check checks the accesses as they are read and --record-only reads none: use one of them");
        assertRefused(Cli.run(dir, "run", "--record-only", rec, "--report", "r.html", "--", prog),
                "memtrace: --report needs the events decoded and --record-only decodes none: memtrace report FILE makes it from the recording");
        assertRefused(Cli.run(dir, "run", "--record-only", rec, "--json-summary", "s.json", "--", prog),
                "memtrace: --json-summary needs the events decoded and --record-only decodes none: memtrace report FILE summarizes the recording");
        assertRefused(Cli.run(dir, "run", "--record-only", rec, "-o", "t.txt", "--", prog),
                "memtrace: -o t.txt: --record-only makes no text trace (memtrace print FILE writes it from the recording)");
        assertRefused(Cli.run(dir, "run", "--record-only", rec, "-o", "-", "--", prog),
                "memtrace: -o -: --record-only makes no text trace (memtrace print FILE writes it from the recording)");
        assertRefused(Cli.run(dir, "run", "--record-only", rec, "--save-stream", "s.rec", "--", prog),
                "memtrace: --record-only FILE already keeps the stream in FILE: drop --save-stream");
        assertRefused(Cli.run(dir, "run", "--record-only", "/dev/null", "--", prog),
                "memtrace: cannot write the stream file /dev/null: it is not a regular file (a device, a FIFO or a directory): name a file");
        assertRefused(Cli.run(dir, "run", "--record-only", loop.toString(), "--", prog),
                "memtrace: --record-only " + prog + " is the program " + prog + " itself; memtrace would overwrite it");
        assertThat(file).doesNotExist();
        assertThat(dir.resolve("t.txt")).doesNotExist();
        assertThat(dir.resolve("r.html")).doesNotExist();
        // a text trace thrown away is no text trace: allowed
        Cli.Result r = Cli.run(dir, "run", "-q", "--record-only", rec, "-o", "/dev/null", "--", prog);
        assertThat(r.status()).as(r.stderr()).isEqualTo(3);
        assertThat(r.stderr()).isEmpty();
        assertThat(file).isNotEmptyFile();
    }

    private static void assertRefused(Cli.Result r, String line) {
        assertThat(r.status()).as(r.stderr()).isEqualTo(2);
        assertThat(r.stderr().lines().toList()).containsExactly(line);
    }
}
