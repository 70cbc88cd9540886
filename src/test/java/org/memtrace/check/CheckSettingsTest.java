package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A bad check setting (MEMTRACE_CHECK's words, the exit code, the quarantine, an existing log file) stops
 * {@code memtrace run --check} in the check runtime's own line and status 2 before the program starts, and
 * nothing more: before, the runtime said it from inside the program and memtrace added a second line guessing
 * why nothing was recorded. The line is the one a {@code memtrace cc --check} program prints for the same value.
 */
class CheckSettingsTest {
    @TempDir Path dir;

    @Test
    void aBadSettingIsTheRuntimesOneLineBeforeTheProgramRuns() throws Exception {
        CheckBuilds.fixture(dir, "cases.c");
        CheckBuilds.build(dir, false, true, "-O0", "-g", "-o", "cases", "cases.c");
        // run --check takes a program memtrace cc did not build
        assertThat(new ProcessBuilder("gcc", "-O0", "-g", "-o", "plain", "cases.c").directory(dir.toFile()).inheritIO().start().waitFor()).isZero();
        Path existing = Files.writeString(dir.resolve("kept.json"), "{}\n");
        List<Map<String, String>> bad = List.of(Map.of("MEMTRACE_CHECK", "bogus"), Map.of("MEMTRACE_CHECK", "continue,,noleak"),
                Map.of("MEMTRACE_CHECK_EXITCODE", "999"), Map.of("MEMTRACE_CHECK_EXITCODE", "12x"),
                Map.of("MEMTRACE_CHECK_QUARANTINE", "lots"), Map.of("MEMTRACE_CHECK_JSON", existing.toString()),
                Map.of("MEMTRACE_CHECK_SARIF", existing.toString()));
        for (Map<String, String> env : bad) {
            CheckBuilds.Run built = CheckBuilds.run(dir, env, "./cases");
            assertThat(built.status()).as(env + built.stderr()).isEqualTo(2);
            assertThat(built.stderr().lines().toList()).as(env.toString()).singleElement().asString().startsWith("memtrace: check: ");
            for (String mode : List.of("rewrite", "fault")) {
                CheckBuilds.Run run = CheckBuilds.runCheck(dir, List.of("--mode", mode), env, "./plain");
                assertThat(run.status()).as(env + run.stderr()).isEqualTo(2);
                assertThat(run.stderr()).as(env + " " + mode).isEqualTo(built.stderr());
            }
        }
        assertThat(Files.readString(existing)).isEqualTo("{}\n");
        // what the runtime takes, memtrace takes
        CheckBuilds.Run good = CheckBuilds.runCheck(dir, List.of(), Map.of("MEMTRACE_CHECK", "noleaks,,summary", "MEMTRACE_CHECK_EXITCODE", " +7",
                "MEMTRACE_CHECK_QUARANTINE", "4096"), "./plain", "heap_overflow", "good");
        assertThat(good.status()).as(good.stderr()).isZero();
        assertThat(good.stderr()).doesNotContain("MEMTRACE_CHECK");
    }
}
