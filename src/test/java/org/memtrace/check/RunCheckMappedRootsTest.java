package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.testutil.Cli;

/**
 * Leak roots include the program's own anonymous mappings (docs/check.md, "Leaks"), as memcheck's do: a block
 * whose only pointer lives in memory the program mmap'd itself is no leak in either mode of {@code run --check}
 * nor in a {@code cc --check} build; its twin, whose mapping goes with the pointer, is exactly one leak. python3,
 * whose pymalloc arenas hold the only pointers to some of its malloc'd blocks, exits with no report.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunCheckMappedRootsTest {
    Path dir;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        CheckBuilds.fixture(dir, "leak_mapped.c");
        Process p = new ProcessBuilder("gcc", "-O2", "-g", "-o", "plain", "leak_mapped.c").directory(dir.toFile())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(out).isZero();
        // -O2: at -O0 a stale copy of the pointer in a dead frame of the real stack keeps the twin's block reachable
        CheckBuilds.build(dir, false, true, "-O2", "-g", "-o", "checked", "leak_mapped.c");
        CheckBuilds.fixture(dir, "own_reuse.c");
        p = new ProcessBuilder("gcc", "-O2", "-g", "-o", "reuse-plain", "own_reuse.c").directory(dir.toFile())
                .redirectErrorStream(true).start();
        out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(out).isZero();
        CheckBuilds.build(dir, false, true, "-O2", "-g", "-o", "reuse-checked", "own_reuse.c");
    }

    /** The kept run silent, its twin one leak of make()'s block (own_reuse.c). */
    private static void reused(CheckBuilds.Run kept, CheckBuilds.Run gone) {
        assertThat(kept.stderr()).as("the program's page where memtrace's line pages were is scanned").isEmpty();
        assertThat(kept.status()).isZero();
        assertThat(gone.status()).as(gone.stderr()).isEqualTo(23);
        assertThat(gone.stderr().lines().toList()).as(gone.stderr()).hasSize(2).satisfiesExactly(
                l -> assertThat(l).matches("memtrace: leak: <malloc\\d+@make\\+\\d+> \\(a block of 40 bytes, allocated at "
                        + "\\S*own_reuse.c:12\\) unreachable at exit"),
                l -> assertThat(l).isEqualTo("memtrace: leaks: 1 block, 40 bytes, from 1 call"));
    }

    /**
     * A range memtrace unmapped leaves its table of own ranges (mt_own_remove): the program's mapping that the
     * kernel places in the hole is scanned. Before, the block whose only pointer it held was a false leak.
     */
    @Test
    void aMappingWhereMemtracesPagesWereIsARootInACheckedBuild() throws Exception {
        reused(CheckBuilds.run(dir, Map.of(), "./reuse-checked"), CheckBuilds.run(dir, Map.of(), "./reuse-checked", "gone"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"rewrite", "fault"})
    void aMappingWhereMemtracesPagesWereIsARootInRunCheck(String mode) throws Exception {
        List<String> options = List.of("--mode", mode);
        reused(CheckBuilds.runCheck(dir, options, Map.of(), "./reuse-plain"),
                CheckBuilds.runCheck(dir, options, Map.of(), "./reuse-plain", "gone"));
    }

    // fault mode missed the kept pointer in 2 of 8 runs while ranges memtrace had unmapped stayed in its table
    // (the program's mapping landed in one); 0 of 16 since they leave it (mt_own_remove)
    @ParameterizedTest
    @ValueSource(strings = {"rewrite", "fault"})
    void aPointerInTheProgramsOwnMappingIsARootInRunCheck(String mode) throws Exception {
        List<String> options = mode.equals("fault") ? List.of("--mode", "fault") : List.of();
        CheckBuilds.Run kept = CheckBuilds.runCheck(dir, options, Map.of(), "./plain");
        assertThat(kept.stderr()).isEmpty();
        assertThat(kept.status()).isZero();
        CheckBuilds.Run gone = CheckBuilds.runCheck(dir, options, Map.of(), "./plain", "gone");
        assertThat(gone.status()).as(gone.stderr()).isEqualTo(23);
        assertThat(gone.stderr().lines().toList()).as(gone.stderr()).hasSize(2).satisfiesExactly(
                l -> assertThat(l).matches("memtrace: leak: <malloc0001@make\\+\\d+> \\(a block of 40 bytes, allocated at "
                        + "leak_mapped.c:9\\) unreachable at exit"),
                l -> assertThat(l).isEqualTo("memtrace: leaks: 1 block, 40 bytes, from 1 call"));
    }

    @Test
    void aPointerInTheProgramsOwnMappingIsARootInACheckedBuild() throws Exception {
        CheckBuilds.Run kept = CheckBuilds.run(dir, Map.of(), "./checked");
        assertThat(kept.stderr()).isEmpty();
        assertThat(kept.status()).isZero();
        CheckBuilds.Run gone = CheckBuilds.run(dir, Map.of(), "./checked", "gone");
        assertThat(gone.status()).as(gone.stderr()).isEqualTo(23);
        assertThat(gone.stderr().lines().toList()).as(gone.stderr()).hasSize(2).satisfiesExactly(
                l -> assertThat(l).matches("memtrace: leak: <malloc0001@make\\+\\d+> \\(a block of 40 bytes, allocated at "
                        + "leak_mapped.c:9\\) unreachable at exit"),
                l -> assertThat(l).isEqualTo("memtrace: leaks: 1 block, 40 bytes, from 1 call"));
    }

    /** A memtrace cc --check build under memtrace run (it hung, its checker and ours on one heap): one line, status 2. */
    @Test
    void aCheckedBuildIsRefusedByRunInOneLine() throws Exception {
        String line = "memtrace: \\S*checked was built with memtrace cc --check and checks itself: run it directly "
                + "\\(memtrace run cannot trace or check it; build it with memtrace cc to trace it\\)";
        CheckBuilds.Run checked = CheckBuilds.runCheck(dir, List.of(), Map.of(), "./checked");
        assertThat(checked.status()).as(checked.stderr()).isEqualTo(2);
        assertThat(checked.stderr().lines().toList()).as(checked.stderr()).singleElement().asString().matches(line);
        Cli.Result traced = Cli.run(dir, "run", "-o", "/dev/null", "--", "./checked");
        assertThat(traced.status()).as(traced.stderr()).isEqualTo(2);
        assertThat(traced.stderr().lines().toList()).as(traced.stderr()).singleElement().asString().matches(line);
    }

    @Test
    void python3ExitsWithNoLeakReport() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "no /usr/bin/python3");
        Files.writeString(dir.resolve("dict.py"), "d = {i: str(i) for i in range(1000)}\nprint(len(d))\n");
        CheckBuilds.Run py = CheckBuilds.runCheck(dir, List.of(), Map.of(), "/usr/bin/python3", "dict.py");
        assertThat(py.stderr()).isEmpty();
        assertThat(py.status()).isZero();
        assertThat(py.stdout()).isEqualTo("1000\n");
    }
}
