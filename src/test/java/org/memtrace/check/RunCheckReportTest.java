package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code memtrace run --check}'s reports of the _FORTIFY_SOURCE functions (issue 23): run_chk_report.c built by
 * plain gcc -O2 -g -D_FORTIFY_SOURCE=2 (chk) and -O0 -g (chk0, which calls __gets_chk by name too). In rewrite
 * mode a __memcpy_chk, __strcpy_chk or __gets_chk past a stack array nobody instrumented is a stack overflow of
 * the size gcc knew (no DWARF variable at -O2: no frame pointer), not an intra-object overflow; with DWARF (-O0)
 * the variable is named, and the frames under the line are the same in both modes (file:line, function). gets's line is checked before a byte of it is stored: the report
 * comes first, and in continue mode __gets_chk's line is cut to the array as glibc's stops there. The good twins
 * run silent with the native output.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunCheckReportTest {
    Path dir;
    Path source;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "run_chk_report.c");
        run("gcc", "-O2", "-g", "-D_FORTIFY_SOURCE=2", "-o", "chk", "run_chk_report.c");
        run("gcc", "-O0", "-g", "-o", "chk0", "run_chk_report.c");
    }

    private void run(String... args) throws Exception {
        Process p = new ProcessBuilder(args).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(out).isZero();
    }

    private CheckBuilds.Run check(String mode, Map<String, String> env, String... command) throws Exception {
        return CheckBuilds.runCheck(dir, List.of("--mode", mode), env, command);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "memcpy | stack overflow: <stack>+16 (an object of 16 bytes on the stack, the size _FORTIFY_SOURCE gave memcpy; no variable known there) written 24 bytes by memcpy, 0 bytes past its end | /usr/include/x86_64-linux-gnu/bits/string_fortified.h: | fill",
        "strcpy | stack overflow: <stack>+8 (an object of 8 bytes on the stack, the size _FORTIFY_SOURCE gave strcpy; no variable known there) written 18 bytes by strcpy, 0 bytes past its end | /usr/include/x86_64-linux-gnu/bits/string_fortified.h: | copy",
        "gets   | stack overflow: <stack>+8 (an object of 8 bytes on the stack, the size _FORTIFY_SOURCE gave gets; no variable known there) written 21 bytes by gets, 0 bytes past its end | run_chk_report.c:{GETS} | read_line",
    })
    void aChkFunctionPastAnUninstrumentedStackArrayIsAStackOverflow(String name, String report, String file, String function) throws Exception {
        CheckBuilds.Run r = check("rewrite", Map.of(), "./chk", name, "bad");
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        // the site's line is the line table's: glibc's inline wrapper's, in its header, for memcpy and strcpy
        String at = file.endsWith(":") ? Pattern.quote(file) + "\\d+" : CheckBuilds.reportPattern(source, file);
        assertThat(r.stderr().lines().toList().getFirst()).startsWith("memtrace: " + report + ", at ")
                .matches(".*, at " + at + " \\(" + function + "\\+\\d+\\), thread \\d+");
        assertThat(r.stdout()).isEmpty();
    }

    /**
     * With DWARF (-O0 -g) the variable is named, and both modes give the same report: the line, then the frames
     * up to main with their file:line and function (rewrite mode's from the program's frame-pointer chain and
     * the executable's .symtab, fault mode's unwound by .eh_frame).
     */
    @Test
    void getsPastAVariableDwarfKnowsIsNamedAlikeInBothModes() throws Exception {
        List<String> report = List.of(
                CheckBuilds.reportPattern(source, "memtrace: stack overflow: <stack:line@read_line>+8 (a variable of 8 bytes, declared at line {LINE} "
                        + "of read_line) written 21 bytes by gets, 0 bytes past its end, at run_chk_report.c:{GETS} (read_line+N), thread ") + "\\d+",
                CheckBuilds.reportPattern(source, "    #0 run_chk_report.c:{GETS} (read_line+N) in read_line"),
                CheckBuilds.reportPattern(source, "    #1 run_chk_report.c:{READ_LINE} (main+N) in main"));
        String fault = null;
        for (String mode : List.of("fault", "rewrite")) {
            CheckBuilds.Run r = check(mode, Map.of(), "./chk0", "gets", "bad");
            assertThat(r.status()).as(r.stderr()).isEqualTo(1);
            List<String> lines = r.stderr().lines().toList();
            assertThat(lines).as(mode + ": " + r.stderr()).hasSize(3);
            for (int i = 0; i < 3; i++) assertThat(lines.get(i)).as(mode).matches(report.get(i));
            String same = r.stderr().replaceAll("thread \\d+", "thread N");
            if (fault == null) fault = same;
            else assertThat(same).isEqualTo(fault);
            assertThat(r.stdout()).isEmpty();
        }
    }

    /** The report came before the line was stored: the program goes on with the line cut to its array, as glibc's __gets_chk stops there. */
    @Test
    void getsChkStoresNothingPastItsArray() throws Exception {
        CheckBuilds.Run r = check("rewrite", Map.of("MEMTRACE_CHECK", "continue"), "./chk", "gets", "bad");
        assertThat(r.stderr().lines().toList().getFirst()).startsWith("memtrace: stack overflow: <stack>+8 (").contains("written 21 bytes by gets");
        assertThat(r.stdout()).isEqualTo("7 a\ndone\n");
        assertThat(r.status()).isEqualTo(1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"memcpy", "strcpy", "gets"})
    void goodTwinsRunSilentlyWithTheNativeOutput(String name) throws Exception {
        CheckBuilds.Run nat = CheckBuilds.run(dir, Map.of(), "./chk", name, "good");
        assertThat(nat.status()).isZero();
        for (String mode : List.of("fault", "rewrite")) {
            CheckBuilds.Run r = check(mode, Map.of(), "./chk", name, "good");
            assertThat(r.stderr()).as(mode).isEmpty();
            assertThat(r.stdout()).as(mode).isEqualTo(nat.stdout());
            assertThat(r.status()).as(mode).isZero();
        }
    }
}
