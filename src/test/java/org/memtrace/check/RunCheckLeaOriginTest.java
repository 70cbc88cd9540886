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
 * {@code memtrace run --check}'s accesses through a pointer from a {@code lea} of a global or a stack variable
 * (docs/check.md, "Pointers from a lea of a global or a variable"): run_lea_origin.c built by plain gcc -O0 -g
 * writes one past {@code int counts[8]} (whose neighbour follows with no padding, so the shadow sees nothing) and
 * a function's {@code static short history[16]}, through {@code lea sym(%rip)} and an index register; one past a
 * {@code char buf[5]} through {@code p = buf; *(p + n)}; one past the second array of a table of pointers to
 * locals ({@code rows[1][5]}); one before a {@code long t[4]} through {@code *(p - n)}. Each is one exact line
 * naming the object, at the access through the register. The twins (the in-bounds index), a pointer folded to
 * the start of the global after the one it points past (read back below it), and the -O2 build run silent with
 * the native output.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunCheckLeaOriginTest {
    Path dir;
    Path source;
    String disassembly;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "run_lea_origin.c");
        disassembly = CheckBuilds.plainBuilds(dir, "gcc", "run_lea_origin.c", "lea");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "global  | global  | global overflow: counts+32 (a global of 32 bytes) written 4 bytes, 0 bytes past its end | GLOBAL",
        "static  | statics | global overflow: history+32 (a global of 32 bytes) written 2 bytes, 0 bytes past its end | STATIC",
        "pointer | pointer | stack overflow: <stack:buf@pointer>+5 (a variable of 5 bytes, declared at line {BUF} of pointer) written 1 byte, 0 bytes past its end | POINTER",
        "pbuf    | pbuf    | stack overflow: <stack:two@pbuf>+20 (a variable of 20 bytes, declared at line {TWO} of pbuf) written 4 bytes, 0 bytes past its end | PBUF",
        "under   | under   | stack underflow: <stack:t@under>-8 (a variable of 32 bytes, declared at line {TABLE} of under) read 8 bytes, 8 bytes before its start | UNDER",
    })
    void anAccessThroughAPointerFromALeaIsCheckedAgainstItsObject(String arg, String function, String report, String access) throws Exception {
        CheckBuilds.assertReportThroughRegister(dir, source, disassembly, "./lea", arg, function, report, access);
    }

    @Test
    void theTwinsAreSilentWithTheNativeOutput() throws Exception {
        for (String build : List.of("./lea", "./lea-O2"))
            for (String[] twin : List.of(new String[] {"global", "good"}, new String[] {"static", "good"}, new String[] {"pointer", "good"},
                    new String[] {"pbuf", "good"}, new String[] {"under", "good"}, new String[] {"folded", "good"},
                    new String[] {"folded", "bad"}, new String[] {"all", "good"})) {
                CheckBuilds.assertSilentAsNative(dir, List.of(), build, twin[0], twin[1]);
            }
    }
}
