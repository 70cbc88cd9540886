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

/**
 * {@code memtrace run --check}'s constant-offset accesses past stack variables (docs/check.md, "Constant
 * offsets past a stack variable"): run_stack_const.c built by plain gcc -O0 -g writes {@code buf[5]} of an
 * {@code int[5]} (into the padding above it), reads {@code t[-1]} of a {@code long[4]}, writes a struct's
 * {@code vals[3]} (past the struct) and {@code tag[5]} of a {@code char[5]} (over the saved {@code %rbp}); each
 * is one exact line naming the variable it overran, at the instruction {@code disp(%rbp)} itself. The twins
 * (the in-bounds branch of the same functions), and the source at -O2 -g, whose stack is not checked, run
 * silent with the native output.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunCheckStackConstTest {
    Path dir;
    Path source;
    String disassembly;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "run_stack_const.c");
        disassembly = CheckBuilds.plainBuilds(dir, "gcc", "run_stack_const.c", "const");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "tail  | stack overflow: <stack:buf@tail>+20 (a variable of 20 bytes, declared at line {BUF} of tail) written 4 bytes, 0 bytes past its end | TAIL | movl",
        "under | stack underflow: <stack:t@under>-8 (a variable of 32 bytes, declared at line {TABLE} of under) read 8 bytes, 8 bytes before its start | UNDER | mov",
        "field | stack overflow: <stack:p@field>+16 (a variable of 16 bytes, declared at line {PAIR} of field) written 4 bytes, 0 bytes past its end | FIELD | movl",
        "smash | stack overflow: <stack:tag@smash>+5 (a variable of 5 bytes, declared at line {TAG} of smash) written 1 byte, 0 bytes past its end | SMASH | movb",
    })
    void aConstantAccessPastAVariableIsReportedAtTheInstruction(String function, String report, String access, String mnemonic) throws Exception {
        String want = CheckBuilds.atLine(source, report);
        CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of(), Map.of(), "./const", function, "bad");
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        List<String> lines = r.stderr().lines().toList();
        assertThat(lines).as(r.stderr()).hasSize(3);
        String site = "run_stack_const.c:" + CheckBuilds.line(source, access);
        CheckBuilds.Reported reported = CheckBuilds.reportedAt(lines.get(0), want, site, function, disassembly);
        long offset = reported.offset();
        CheckBuilds.assertFramesToMain(lines, site, function, offset, "run_stack_const.c");
        long at = reported.address();
        // the site is the constant access itself: disp(%rbp), no index
        assertThat(disassembly).containsPattern("(?m)^\\s+" + Long.toHexString(at) + ":\\s+" + mnemonic + "\\s+\\S*-?0x[0-9a-f]+\\(%rbp\\)");
        assertThat(r.stdout()).isEmpty(); // stopped at the report
    }

    @Test
    void theTwinsAreSilentWithTheNativeOutput() throws Exception {
        for (String build : List.of("./const", "./const-O2"))
            for (String twin : List.of("tail", "under", "field", "smash", "all"))
                CheckBuilds.assertSilentAsNative(dir, List.of(), build, twin, "good");
    }

    /** At -O2 gcc addresses the frame from %rsp and folds (or drops) the bad store: not checked, not reported. */
    @Test
    void optimisedCodeIsNotCheckedOnTheStack() throws Exception {
        CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of(), Map.of(), "./const-O2", "under", "bad");
        assertThat(r.stderr()).isEmpty();
        assertThat(r.stdout()).startsWith("done ");
    }
}
