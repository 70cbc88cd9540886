package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.memtrace.launch.NativeFiles;

/**
 * The check runtime's report entry points for gcc's own inline instrumentation ({@code -fsanitize=address} at its
 * default call threshold: gcc tests the shadow in line and calls {@code __asan_report_load4} and the like only
 * when its test failed; docs/check.md, "gcc's inline checks"). granule.c (CheckGranuleTest's) is compiled so by
 * plain gcc and linked with the check runtime, no libasan and no as step: accesses inside its block of 20 bytes
 * (partial last granule included) are silent, one past it is reported as {@code memtrace cc --check} reports it
 * (without the as step's site table the access is named by function and offset), and a report from gcc's
 * noreturn entry points stops the program also in continue mode, while the recovering ones
 * ({@code -fsanitize-recover=address}) go on.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckInlineReportTest {
    private Path dir;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        CheckBuilds.fixture(dir, "granule.c");
        Path runtime = NativeFiles.checkRuntime().getParent();
        for (boolean recover : List.of(false, true)) {
            String name = recover ? "granule-recover" : "granule";
            gcc(recover ? List.of("-O2", "-g", "-fsanitize=address", "-fsanitize-recover=address", "-c", "-o", name + ".o", "granule.c")
                    : List.of("-O2", "-g", "-fsanitize=address", "-c", "-o", name + ".o", "granule.c"));
            gcc(List.of("-o", name, name + ".o", "-L" + runtime, "-Wl,--no-as-needed", "-lmemtrace-check", "-Wl,-rpath," + runtime));
        }
    }

    private void gcc(List<String> args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("gcc"));
        command.addAll(args);
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(out).isZero();
    }

    @ParameterizedTest
    @CsvSource({"1,19,r", "2,18,w", "4,16,r", "8,8,r", "8,12,r", "1,0,w"})
    void anAccessInsideTheBlockIsSilent(int width, int offset, String access) throws Exception {
        CheckBuilds.Run run = CheckBuilds.run(dir, Map.of(), "./granule", "" + width, "" + offset, access);
        assertThat(run.stderr()).isEmpty();
        assertThat(run.status()).isZero();
    }

    @ParameterizedTest
    @CsvSource({"1,20,r,get", "4,17,w,put", "2,22,w,put"})
    void anAccessPastTheBlockIsReportedAtItsFirstBadByte(int width, int offset, String access, String function) throws Exception {
        CheckBuilds.Run run = CheckBuilds.run(dir, Map.of(), "./granule", "" + width, "" + offset, access);
        assertThat(run.status()).isEqualTo(1);
        int first = Math.max(offset, 20);
        String what = (access.equals("r") ? "read " : "written ") + width + (width == 1 ? " byte" : " bytes");
        assertThat(run.stderr()).matches("memtrace: heap overflow: <calloc0001@main\\+\\d+>\\+" + first + " \\(a block of 20 bytes, "
                + "allocated at main\\+\\d+\\) " + what + ", " + (first - 20) + " bytes? past its end, at " + function + "\\+\\d+, thread \\d+\n");
    }

    @Test
    void aNoreturnReportStopsAlsoInContinueMode() throws Exception {
        CheckBuilds.Run run = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK", "continue"), "./granule", "1", "-1", "r");
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.stdout()).isEmpty();
        assertThat(run.stderr()).startsWith("memtrace: heap underflow: <calloc0001@main+").contains("1 byte before its start, at get+")
                .containsOnlyOnce("memtrace: heap underflow");
    }

    @Test
    void aRecoveringReportGoesOnInContinueMode() throws Exception {
        CheckBuilds.Run run = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK", "continue"), "./granule-recover", "1", "-1", "r");
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.stdout()).isNotEmpty();
        assertThat(run.stderr()).startsWith("memtrace: heap underflow: <calloc0001@main+").contains("1 error");
    }
}
