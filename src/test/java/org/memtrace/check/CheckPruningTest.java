package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pruning loses no detection: loops.c's shapes (up, down, stride 2, pointer to an end, struct fields,
 * nested, indirect) built with {@code --check} and {@code --check --no-prune} report the same bug with the
 * same kind, object and distance and stay silent on the same twins, while the pruned build removes checks
 * statically and executes fewer. The bench programs built {@code --check} run with no report at all.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckPruningTest {
    static final List<String> LOOPS = List.of("sum_up", "sum_down", "stride", "pointers", "fields", "copy2d", "indirect",
            "branches");
    private static final Pattern SUMMARY = Pattern.compile("memtrace: check summary: (\\d+) accesses checked by (\\d+) checks .*"
            + "statically (\\d+) of (\\d+) checks removed \\((\\d+) by loop checks, (\\d+) by block ranges\\).*");
    Path dir;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        CheckBuilds.fixture(dir, "loops.c");
        CheckBuilds.build(dir, false, true, "-O2", "-g", "-o", "pruned", "loops.c");
        CheckBuilds.build(dir, false, false, "-O2", "-g", "-o", "all", "loops.c");
        CheckBuilds.build(dir, false, true, "-O0", "-g", "-o", "pruned0", "loops.c");
    }

    /**
     * A loop with an if in its body: its every-iteration read of a[i] is one range check at the loop's entry
     * (-O2), and still reports the read one past the block on the last iteration, exactly; at -O0 the index
     * lives in memory, the check stays at the access and reports the same object, offset and line.
     */
    @Test
    void aBranchyLoopsRangeCheckCatchesItsLastIteration() throws Exception {
        Path source = dir.resolve("loops.c");
        String block = "<malloc0001@branches\\+\\d+>\\+512 \\(a block of 512 bytes, allocated at loops.c:"
                + CheckBuilds.line(source, "BRANCHES_ALLOC") + "\\) read 8 bytes";
        String rest = ", 0 bytes past its end, at loops.c:" + CheckBuilds.line(source, "BRANCHES") + " \\(branches\\+\\d+\\), thread \\d+\n";
        CheckBuilds.Run o2 = CheckBuilds.run(dir, Map.of(), "./pruned", "branches", "bad");
        assertThat(o2.stderr()).matches("memtrace: heap overflow: " + block + " by the loop" + rest);
        assertThat(o2.status()).isEqualTo(1);
        CheckBuilds.Run o0 = CheckBuilds.run(dir, Map.of(), "./pruned0", "branches", "bad");
        assertThat(o0.stderr()).matches("memtrace: heap overflow: " + block + rest);
        assertThat(o0.status()).isEqualTo(1);
        for (String build : List.of("./pruned", "./pruned0")) {
            CheckBuilds.Run good = CheckBuilds.run(dir, Map.of(), build, "branches", "good");
            assertThat(good.stderr()).as(build).isEmpty();
            assertThat(good.status()).isZero();
        }
    }

    /**
     * The in-bounds rule: masked_table[i & 63] is proven inside the 64-element global and loses its check (the
     * pruned build checks nothing in that run), masked_table[i & 127] keeps its check and reports the first
     * element past the global in every build.
     */
    @Test
    void aMaskedIndexIsProvenAndATooWideMaskStillReports() throws Exception {
        Path source = dir.resolve("loops.c");
        String report = "memtrace: global overflow: masked_table\\+512 \\(a global of 512 bytes, defined at loops.c:"
                + CheckBuilds.line(source, "MASKED_TABLE") + "\\) read 8 bytes, 0 bytes past its end, at loops.c:"
                + CheckBuilds.line(source, "MASKED_BAD") + " \\(masked127\\+\\d+\\), thread \\d+\n";
        Map<String, Long> executed = new java.util.HashMap<>();
        for (String build : List.of("./pruned", "./all", "./pruned0")) {
            CheckBuilds.Run bad = CheckBuilds.run(dir, Map.of(), build, "masked", "bad");
            assertThat(bad.stderr()).as(build).matches(report);
            assertThat(bad.status()).isEqualTo(1);
            CheckBuilds.Run good = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK", "summary"), build, "masked", "good");
            assertThat(good.status()).isZero();
            Matcher m = SUMMARY.matcher(good.stderr().strip());
            assertThat(m.matches()).as(build + ": " + good.stderr()).isTrue();
            executed.put(build, Long.parseLong(m.group(2)));
        }
        // -O2: masked63's 128 iterations each run a check unpruned, none pruned (main's checks are alike in both)
        assertThat(executed.get("./all") - executed.get("./pruned")).isGreaterThanOrEqualTo(128);
    }

    /**
     * The report without what may differ between the two builds: the code offsets (of the access and of the
     * allocating call: a function whose loops are checked at entry runs gcc's unchecked body, other code),
     * "by the loop", and the end of a loop's overrun range (stride's unchecked body reads a[i] and a[i + 1] as
     * one range: +128..+131, 2 bytes at a time, 0..3 bytes past its end, where the per-access check stops at
     * the first, +128, 0 bytes past its end).
     */
    private static String essence(String report) {
        return report.lines().findFirst().orElse("").replaceAll(" by the loop", "").replaceAll("\\([a-z_0-9]+\\+\\d+\\), thread \\d+", "")
                .replaceAll("@([a-z_0-9]+)\\+\\d+>", "@$1>").replaceAll("([+-]\\d+)\\.\\.[+-]\\d+ ", "$1 ")
                .replaceAll(" at a time", "").replaceAll("(\\d+)\\.\\.\\d+ bytes", "$1 bytes");
    }

    @Test
    void prunedAndUnprunedBuildsFindTheSameBugs() throws Exception {
        long prunedChecks = 0, allChecks = 0;
        for (String c : LOOPS) {
            CheckBuilds.Run p = CheckBuilds.run(dir, Map.of(), "./pruned", c, "bad");
            CheckBuilds.Run a = CheckBuilds.run(dir, Map.of(), "./all", c, "bad");
            assertThat(p.stderr()).as(c).startsWith("memtrace: heap ");
            assertThat(essence(p.stderr())).as(c).isEqualTo(essence(a.stderr()));
            assertThat(p.status()).isEqualTo(1);
            for (String build : List.of("./pruned", "./all")) {
                CheckBuilds.Run good = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK", "summary"), build, c, "good");
                Matcher m = SUMMARY.matcher(good.stderr().strip());
                assertThat(m.matches()).as(build + " " + c + ": " + good.stderr()).isTrue();
                assertThat(good.status()).isZero();
                if (build.equals("./pruned")) prunedChecks += Long.parseLong(m.group(2));
                else allChecks += Long.parseLong(m.group(2));
                if (build.equals("./pruned")) {
                    assertThat(Long.parseLong(m.group(3))).as("removed statically").isPositive();
                    assertThat(Long.parseLong(m.group(5))).as("removed by loop checks").isPositive();
                } else {
                    assertThat(m.group(3)).isEqualTo("0");
                }
            }
        }
        assertThat(prunedChecks * 3).as("the pruned build executes under a third of the checks").isLessThan(allChecks);
        // a loop whose index comes from memory cannot be hoisted: its bug is reported at the access itself
        assertThat(CheckBuilds.run(dir, Map.of(), "./pruned", "indirect", "bad").stderr()).doesNotContain("by the loop");
        assertThat(CheckBuilds.run(dir, Map.of(), "./pruned", "sum_up", "bad").stderr()).contains("read 8 bytes by the loop");
        // a loop that runs 10 elements past its block: the whole range it overran, from the loop's entry
        assertThat(CheckBuilds.run(dir, Map.of(), "./pruned", "pointers", "bad", "64", "10").stderr())
                .matches("memtrace: heap overflow: <malloc0001@pointers\\+\\d+>\\+64\\.\\.\\+73 \\(a block of 64 bytes, allocated at "
                        + "loops.c:\\d+\\) read 1 byte at a time by the loop, 0\\.\\.9 bytes past its end, at loops.c:\\d+ "
                        + "\\(pointers\\+\\d+\\), thread \\d+\n");
    }

    @Test
    void benchProgramsRunCheckedWithoutAReport(@TempDir Path bench) throws Exception {
        Path programs = Path.of("bench/programs");
        List<Path> sources;
        try (Stream<Path> s = Files.list(programs)) {
            sources = s.filter(p -> p.toString().endsWith(".c")).sorted().toList();
        }
        assertThat(sources).hasSizeGreaterThan(10);
        for (Path source : sources) {
            String name = source.getFileName().toString().replace(".c", "");
            CheckBuilds.build(bench, false, true, "-O2", "-g", "-pthread", "-o",
                    bench.resolve(name).toString(), source.toAbsolutePath().toString(), "-lm");
            CheckBuilds.Run r = CheckBuilds.run(bench, Map.of(), bench.resolve(name).toString());
            assertThat(r.stderr()).as(name).doesNotContain("memtrace:");
            assertThat(r.status()).as(name).isZero();
            if (List.of("heap", "chase", "qsort", "threads").contains(name)) {
                // no quarantine: every freed chunk goes back to glibc at once, and is reused by blocks and by the
                // runtime's own leak scan (whose memset once found the old "freed" shadow: a wild access at exit)
                CheckBuilds.Run q = CheckBuilds.run(bench, Map.of("MEMTRACE_CHECK_QUARANTINE", "0"), bench.resolve(name).toString());
                assertThat(q.stderr()).as(name + " without quarantine").doesNotContain("memtrace:");
                // threads reads the array while the others write their quarters: its sum depends on the schedule
                if (!name.equals("threads")) assertThat(q.stdout()).as(name + " without quarantine").isEqualTo(r.stdout());
                assertThat(q.status()).as(name + " without quarantine").isZero();
            }
        }
    }
}
