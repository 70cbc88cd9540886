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
 * {@code memtrace run --check}'s pointers from a {@code lea} (docs/check.md, "Pointers from a lea of a global or
 * a variable") in C++ built by plain g++ -O0 -g (run_lea_origin_cxx.cc): one past a file-static {@code int
 * cases[8]} ({@code _ZL5cases}) and a namespace's {@code ns::table} ({@code _ZN2ns5tableE}), each named as
 * cc --check names it ({@code cases}, {@code table}); one past a struct's array member in a namespace function
 * (the corpus's cxx_stack_array_member) and one past a local array of a class's member function, both defined
 * by a DWARF DIE with only DW_AT_specification (their variables were not read before). Each is one exact line at
 * the access through the register; the twins and the -O2 build run silent with the native output.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunCheckLeaOriginCxxTest {
    Path dir;
    Path source;
    String disassembly;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "run_lea_origin_cxx.cc");
        disassembly = CheckBuilds.plainBuilds(dir, "g++", "run_lea_origin_cxx.cc", "lea");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "static   | statics(int)            | global overflow: cases+32 (a global of 32 bytes) written 4 bytes, 0 bytes past its end | STATIC",
        "nsglobal | nsglobal(int)           | global overflow: table+32 (a global of 32 bytes) written 4 bytes, 0 bytes past its end | NSGLOBAL",
        "member   | ns::fill(unsigned long) | stack overflow: <stack:p@fill>+20 (a variable of 20 bytes, declared at line {PACKET} of fill) written 1 byte, 0 bytes past its end | MEMBER",
        "method   | ns::log::add(int)       | stack overflow: <stack:line@add>+6 (a variable of 6 bytes, declared at line {LINE} of add) written 1 byte, 0 bytes past its end | METHOD",
    })
    void anAccessThroughAPointerFromALeaIsCheckedAgainstItsObject(String arg, String function, String report, String access) throws Exception {
        CheckBuilds.assertReportThroughRegister(dir, source, disassembly, "./lea", arg, function, report, access);
    }

    @Test
    void theTwinsAreSilentWithTheNativeOutput() throws Exception {
        for (String build : List.of("./lea", "./lea-O2"))
            for (String twin : List.of("static", "nsglobal", "member", "method", "all"))
                CheckBuilds.assertSilentAsNative(dir, List.of(), build, twin, "good");
    }
}
