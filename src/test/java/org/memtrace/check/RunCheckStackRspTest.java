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
 * {@code memtrace run --check} on gcc -O2 -g code, whose frames are addressed from {@code %rsp} (docs/check.md,
 * "Stack variables of optimised code"): run_stack_rsp.c's memcpy of 24 bytes into an {@code int[5]}, which gcc
 * expands into constant stores (the last, 8 bytes at {@code buf + 16}, found statically: org.memtrace.rewrite.RspFrames),
 * a histogram loop whose counts gcc indexes {@code (%rsp,%rax,4)} (checked inline against {@code counts}), and a
 * strcpy (gcc's stpcpy) past a {@code char[10]} (the check runtime finds the caller's frame from the CFA the
 * table gives). Each is one exact line; the twins run silent with the native output.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunCheckStackRspTest {
    Path dir;
    Path source;
    String disassembly;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "run_stack_rsp.c");
        CheckBuilds.tool(dir, "gcc", "-O2", "-g", "-w", "-o", "rsp", "run_stack_rsp.c");
        disassembly = CheckBuilds.tool(dir, "objdump", "-d", "--no-show-raw-insn", "rsp");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "tail | tail | stack overflow: <stack:buf@tail>+20 (a variable of 20 bytes, declared at line {BUF} of tail) written 8 bytes, 0 bytes past its end | TAIL | mov\\s+%rax,0x10\\(%rsp\\)",
        "hist | hist.constprop.0 | stack overflow: <stack:counts@hist>+32 (a variable of 32 bytes, declared at line {COUNTS} of hist) written 4 bytes, 0 bytes past its end | HIST | addl\\s+\\$0x1,\\(%rsp,%rax,4\\)",
        "copy | copy | stack overflow: <stack:name@copy>+10 (a variable of 10 bytes, declared at line {NAME} of copy) written 11 bytes by stpcpy, 0 bytes past its end | COPY | call",
    })
    void anOverflowOfAnOptimisedFrameIsReportedAtItsInstruction(String which, String symbol, String report, String access, String insn) throws Exception {
        String want = CheckBuilds.atLine(source, report);
        CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of(), Map.of(), "./rsp", which, "bad");
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        List<String> lines = r.stderr().lines().toList();
        String site = "run_stack_rsp.c:" + CheckBuilds.line(source, access);
        assertThat(lines).as(r.stderr()).isNotEmpty();
        long at = CheckBuilds.reportedAt(lines.getFirst(), want, site, symbol, disassembly).address();
        // a direct access's site is the %rsp instruction itself; a libc call's, its return address after the call
        String pattern = insn.equals("call") ? "(?m)^\\s+[0-9a-f]+:\\s+call\\s+[0-9a-f]+ <stpcpy@plt>\\n\\s+" + Long.toHexString(at) + ":"
                : "(?m)^\\s+" + Long.toHexString(at) + ":\\s+" + insn;
        assertThat(disassembly).containsPattern(pattern);
        assertThat(r.stdout()).isEmpty(); // stopped at the report
    }

    @Test
    void theTwinsAreSilentWithTheNativeOutput() throws Exception {
        for (String twin : List.of("tail", "hist", "copy", "all"))
            CheckBuilds.assertSilentAsNative(dir, List.of(), "./rsp", twin, "good");
    }
}
