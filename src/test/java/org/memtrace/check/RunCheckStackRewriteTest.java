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

/**
 * {@code memtrace run --check --mode rewrite}'s direct accesses to stack variables (docs/check.md, "Direct
 * accesses to stack variables"): run_stack_direct.c built by plain gcc -O0 -g writes past an int[10] in a loop,
 * past a struct's trailing array, reads table[-1] and past a long[4], and writes a[i - 1] one too far; each is
 * one exact line with the variable, its function and declaration line, the bytes and the distance, at the
 * indexed instruction itself ({@code disp(%rbp,%rax,scale)}, by objdump), with its frames as fault mode names
 * them (the instruction's file:line and function, then main's call). The twins, and the same source at
 * -O2 -g, run silent with the native output; at -O2 table[-1] is found from {@code %rsp} (RspFrames).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunCheckStackRewriteTest {
    Path dir;
    Path source;
    String disassembly;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "run_stack_direct.c");
        CheckBuilds.tool(dir, "gcc", "-O0", "-g", "-o", "direct", "run_stack_direct.c");
        CheckBuilds.tool(dir, "gcc", "-O2", "-g", "-o", "direct-O2", "run_stack_direct.c");
        disassembly = CheckBuilds.tool(dir, "objdump", "-d", "--no-show-raw-insn", "direct");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "loop    | stack overflow: <stack:buffer@loop>+40 (a variable of 40 bytes, declared at line {BUFFER} of loop) written 4 bytes, 0 bytes past its end | LOOP | loop",
        "field   | stack overflow: <stack:r@field>+36 (a variable of 36 bytes, declared at line {RECORD} of field) written 4 bytes, 0 bytes past its end | FIELD | field",
        "under   | stack underflow: <stack:table@under>-4 (a variable of 64 bytes, declared at line {TABLE} of under) read 4 bytes, 4 bytes before its start | UNDER | under",
        "read    | stack overflow: <stack:window@read_past>+32 (a variable of 32 bytes, declared at line {WINDOW} of read_past) read 8 bytes, 0 bytes past its end | READ | read_past",
        "shifted | stack overflow: <stack:a@shifted>+24 (a variable of 24 bytes, declared at line {SHIFTED} of shifted) written 4 bytes, 0 bytes past its end | SHIFT | shifted",
    })
    void anIndexedAccessPastAVariableIsReportedAtTheInstruction(String name, String report, String access, String function) throws Exception {
        String want = CheckBuilds.atLine(source, report);
        CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of("--mode", "rewrite"), Map.of(), "./direct", name, "bad");
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        List<String> lines = r.stderr().lines().toList();
        assertThat(lines).as(r.stderr()).hasSize(3);
        String site = "run_stack_direct.c:" + CheckBuilds.line(source, access);
        CheckBuilds.Reported reported = CheckBuilds.reportedAt(lines.get(0), want, site, function, disassembly);
        long offset = reported.offset();
        // the frames as fault mode names them: the instruction's file:line and function, then its caller up to main
        CheckBuilds.assertFramesToMain(lines, site, function, offset, "run_stack_direct.c");
        long at = reported.address();
        // the site is the indexed instruction itself, %rbp-based
        assertThat(disassembly).containsPattern("(?m)^\\s+" + Long.toHexString(at) + ":\\s+mov\\S*\\s+\\S*-0x[0-9a-f]+\\(%rbp,%rax,[48]\\)");
        assertThat(r.stdout()).isEmpty(); // stopped at the report
    }

    @Test
    void theTwinsAreSilentWithTheNativeOutput() throws Exception {
        for (String build : List.of("./direct", "./direct-O2"))
            CheckBuilds.assertSilentAsNative(dir, List.of("--mode", "rewrite"), build, "all", "good");
    }

    /**
     * At -O2 gcc indexes {@code table} from {@code %rsp} ({@code (%rsp,%rax,4)}, under inlined into main): checked
     * against it through the CFI (docs/check.md, "Stack variables of optimised code"), the -O0 line at main's site.
     */
    @Test
    void optimisedCodeIndexedFromRspIsChecked() throws Exception {
        CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of("--mode", "rewrite"), Map.of(), "./direct-O2", "under", "bad");
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        assertThat(r.stderr().lines().findFirst().orElse("")).matches(Pattern.quote("memtrace: stack underflow: <stack:table@under>-4 (a variable of 64 bytes, declared at line "
                + CheckBuilds.line(source, "TABLE") + " of under) read 4 bytes, 4 bytes before its start, at run_stack_direct.c:"
                + CheckBuilds.line(source, "UNDER") + " (main+") + "\\d+\\), thread \\d+");
        assertThat(r.stdout()).isEmpty();
    }
}
