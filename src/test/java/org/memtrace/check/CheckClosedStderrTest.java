package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A program that closes its stderr stream at exit (coreutils' close_stdout, run by atexit before the checker's
 * leak check) still gets its leak report: the check runtime keeps a copy of descriptor 2 when the program
 * fcloses stderr. Before, `memtrace run --check -- sort FILE` exited 23 (leaks) with no line saying why.
 */
class CheckClosedStderrTest {
    @TempDir Path dir;

    @Test
    void theLeakReportOutlivesTheProgramsFcloseOfStderr() throws Exception {
        Path source = CheckBuilds.fixture(dir, "close_stderr.c");
        CheckBuilds.build(dir, false, true, "-O0", "-g", "-o", "built", "close_stderr.c");
        CheckBuilds.Run built = CheckBuilds.run(dir, Map.of(), "./built");
        assertThat(built.status()).as(built.stderr()).isEqualTo(23);
        assertThat(built.stdout()).isEqualTo("ok\n");
        assertThat(built.stderr()).isEqualTo("memtrace: leak: <malloc0001@main+" + built.stderr().replaceAll("(?s).*@main\\+(\\d+)>.*", "$1")
                + "> (a block of 16 bytes, allocated at close_stderr.c:" + CheckBuilds.line(source, "LEAK") + ") unreachable at exit\n"
                + "memtrace: leaks: 1 block, 16 bytes, from 1 call\n");

        assertThat(new ProcessBuilder("gcc", "-O0", "-g", "-o", "plain", "close_stderr.c").directory(dir.toFile()).inheritIO().start().waitFor()).isZero();
        CheckBuilds.Run run = CheckBuilds.runCheck(dir, List.of(), Map.of(), "./plain");
        assertThat(run.status()).as(run.stderr()).isEqualTo(23);
        assertThat(run.stdout()).isEqualTo("ok\n");
        assertThat(run.stderr()).contains("memtrace: leak: <malloc0001@").contains("(a block of 16 bytes, allocated at ")
                .endsWith("memtrace: leaks: 1 block, 16 bytes, from 1 call\n");
    }

    /**
     * The copy of stderr is the checker's only while it is the file kept: a program that puts its own file on
     * that number later (dup2) never gets a report written into it (the report is lost; the status still says
     * leaks). Before, the leak lines went into the program's file.
     */
    @Test
    void aFileTheProgramPutsOnTheKeptNumberNeverGetsAReport() throws Exception {
        CheckBuilds.fixture(dir, "close_stderr.c");
        CheckBuilds.build(dir, false, true, "-O0", "-g", "-o", "built", "close_stderr.c");
        CheckBuilds.Run built = CheckBuilds.run(dir, Map.of(), "./built", "take");
        assertThat(built.status()).as(built.stderr()).isEqualTo(23);
        assertThat(built.stdout()).isEqualTo("ok\n");
        assertThat(built.stderr()).isEmpty();
        assertThat(dir.resolve("mine.txt")).isEmptyFile();
    }
}
