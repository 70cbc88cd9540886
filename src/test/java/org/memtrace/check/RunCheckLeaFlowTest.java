package org.memtrace.check;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code memtrace run --check}'s pointers from a {@code lea} of a stack variable followed through the function's
 * branches (docs/check.md, "Pointers across branches, loops and calls"): run_lea_flow.c built by plain gcc -O0 -g
 * writes one before {@code int buf[5]} through a pointer decremented in its slot by a loop; one past {@code long
 * buf[4]} through a pointer kept in its slot across a call (that returns the index); past {@code char small[8]}
 * through a struct pointer kept in a global; one past a stack array of structs (gcc's {@code add %rbp,%rax; lea
 * -0x70(%rax),%rdx}); 4 bytes into {@code char two[2]}. Each is one exact line naming the variable, at the access
 * through the register. The twins (in bounds) and the -O2 build run silent with the native output.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunCheckLeaFlowTest {
    Path dir;
    Path source;
    String disassembly;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "run_lea_flow.c");
        disassembly = CheckBuilds.plainBuilds(dir, "gcc", "run_lea_flow.c", "flow");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "down    | down    | stack underflow: <stack:buf@down>-4 (a variable of 20 bytes, declared at line {DOWN} of down) written 4 bytes, 4 bytes before its start | DOWN_AT",
        "call    | call    | stack overflow: <stack:buf@call>+32 (a variable of 32 bytes, declared at line {CALL} of call) written 8 bytes, 0 bytes past its end | CALL_AT",
        "kept    | kept    | stack overflow: <stack:small@kept>+8 (a variable of 8 bytes, declared at line {KEPT} of kept) written 4 bytes, 0 bytes past its end | KEPT_AT",
        "records | records | stack overflow: <stack:table@records>+96 (a variable of 96 bytes, declared at line {RECORDS} of records) written 4 bytes, 0 bytes past its end | RECORDS_AT",
        "wide    | wide    | stack overflow: <stack:two@wide>+2 (a variable of 2 bytes, declared at line {WIDE} of wide) written 4 bytes, 0 bytes past its end | WIDE_AT",
    })
    void aPointerFollowedThroughBranchesIsCheckedAgainstItsVariable(String arg, String function, String report, String access) throws Exception {
        CheckBuilds.assertReportThroughRegister(dir, source, disassembly, "./flow", arg, function, report, access);
    }

    @Test
    void theTwinsAreSilentWithTheNativeOutput() throws Exception {
        for (String build : List.of("./flow", "./flow-O2"))
            for (String c : List.of("down", "call", "kept", "records", "wide", "all"))
                CheckBuilds.assertSilentAsNative(dir, List.of(), build, c, "good");
    }
}
