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
 * libc's input functions writing past a buffer (docs/check.md, check_io.c): input.c's read, pread, recv, fread and
 * fgets 16 bytes too many into a heap block, a stack array and a global, built {@code memtrace cc --check} at -O0,
 * -O2 and -O2 -D_FORTIFY_SOURCE=2 (their {@code _chk} forms, the caller's line, not glibc's header's); the kernel's
 * writes (read, pread, recv) also under {@code memtrace run --check} in both modes. Each report names the object,
 * the bytes the function wrote and the call's line; every twin is silent and prints what the plain build prints.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckInputTest {
    static final List<String> BUILDS = List.of("input-O0", "input-O2", "input-O2F");
    Path dir;
    Path source;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.buildFourWays(dir, "input");
    }

    private String expected(String report) throws Exception { return CheckBuilds.reportPattern(source, report); }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "read_heap    | heap overflow: <malloc0001@read_heap+N>+32 (a block of 32 bytes, allocated at input.c:{READ_ALLOC}) written 48 bytes by read, 0 bytes past its end, at input.c:{READ} (read_heap+N)",
        "read_stack   | stack overflow: <stack:small@read_stack>+32 (a variable of 32 bytes, declared at line {SMALL} of read_stack) written 48 bytes by read, 0 bytes past its end, at input.c:{READ_STACK} (read_stack+N)",
        "read_global  | global overflow: gline+32 (a global of 32 bytes, defined at input.c:{GLINE}) written 48 bytes by read, 0 bytes past its end, at input.c:{READ_GLOBAL} (read_global+N)",
        "pread_heap   | heap overflow: <malloc0003@pread_heap+N>+40 (a block of 40 bytes, allocated at input.c:{PREAD_ALLOC}) written 48 bytes by pread, 0 bytes past its end, at input.c:{PREAD} (pread_heap+N)",
        "recv_heap    | heap overflow: <malloc0001@recv_heap+N>+32 (a block of 32 bytes, allocated at input.c:{RECV_ALLOC}) written 48 bytes by recv, 0 bytes past its end, at input.c:{RECV} (recv_heap+N)",
        "fread_heap   | heap overflow: <malloc0003@fread_heap+N>+32 (a block of 32 bytes, allocated at input.c:{FREAD_ALLOC}) written 48 bytes by fread, 0 bytes past its end, at input.c:{FREAD} (fread_heap+N)",
        "fgets_heap   | heap overflow: <malloc0003@fgets_heap+N>+32 (a block of 32 bytes, allocated at input.c:{FGETS_ALLOC}) written 49 bytes by fgets, 0 bytes past its end, at input.c:{FGETS} (fgets_heap+N)",
        "fgets_stack  | stack overflow: <stack:line@fgets_stack>+32 (a variable of 32 bytes, declared at line {LINE} of fgets_stack) written 49 bytes by fgets, 0 bytes past its end, at input.c:{FGETS_STACK} (fgets_stack+N)",
        "fgets_global | global overflow: gline+32 (a global of 32 bytes, defined at input.c:{GLINE}) written 49 bytes by fgets, 0 bytes past its end, at input.c:{FGETS_GLOBAL} (fgets_global+N)",
    })
    void anInputFunctionWritingPastItsBufferIsReportedAtItsCall(String name, String report) throws Exception {
        String want = "memtrace: " + expected(report) + ", thread \\d+";
        // -O2 fortify: the line is the caller's last .loc before glibc's inline wrapper, which scheduling may move
        // (read_stack's is its return statement's): any line of input.c there
        String fortified = want.replaceFirst("at input\\.c:\\\\E\\d+\\\\Q", "at input.c:\\\\E\\\\d+\\\\Q");
        for (String b : BUILDS) {
            CheckBuilds.Run r = CheckBuilds.run(dir, Map.of(), "./" + b, name, "bad");
            assertThat(r.status()).as(b + " " + r.stderr()).isEqualTo(1);
            List<String> lines = r.stderr().lines().toList();
            assertThat(lines.getFirst()).as(b).matches(b.equals("input-O2F") ? fortified : want);
            // glibc's inline _chk wrapper is an inlined frame: the fortified build lists it and its caller
            assertThat(lines).as(b).hasSize(b.equals("input-O2F") ? 3 : 1);
            assertThat(r.stdout()).as(b).isEmpty(); // stopped at the report
        }
    }

    @Test
    void theTwinsAreSilentWithThePlainOutput() throws Exception {
        CheckBuilds.Run plain = CheckBuilds.run(dir, Map.of(), "./input-plain", "all", "good");
        assertThat(plain.stdout()).startsWith("done ");
        for (String b : BUILDS) {
            CheckBuilds.Run r = CheckBuilds.run(dir, Map.of(), "./" + b, "all", "good");
            assertThat(r.stderr()).as(b).isEmpty();
            assertThat(r.stdout()).as(b).isEqualTo(plain.stdout());
            assertThat(r.status()).as(b).isZero();
        }
        for (String mode : List.of("fault", "rewrite")) {
            CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of("--mode", mode), Map.of(), "./input-plain", "all", "good");
            assertThat(r.stderr()).as(mode).isEmpty();
            assertThat(r.stdout()).as(mode).isEqualTo(plain.stdout());
        }
    }

    /** The kernel's writes under run --check: fault mode checks them after the call (a stack variable of -O0 -g code by its
     * frame, from the caller's %rbp), rewrite mode in the wrapper. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "read_heap  | fault   | heap overflow: <malloc0001@read_heap+N>+32 (a block of 32 bytes, allocated at input.c:{READ_ALLOC}) written 48 bytes by read, 0 bytes past its end, at input.c:{READ} (read_heap+N)",
        "read_heap  | rewrite | heap overflow: <malloc0001@read_heap+N>+32 (a block of 32 bytes, allocated at input.c:{READ_ALLOC}) written 48 bytes by read, 0 bytes past its end, at input.c:{READ} (read_heap+N)",
        "read_stack | fault   | stack overflow: <stack:small@read_stack>+32 (a variable of 32 bytes, declared at line {SMALL} of read_stack) written 48 bytes by read, 0 bytes past its end, at input.c:{READ_STACK} (read_stack+N)",
        "pread_heap | fault   | heap overflow: <malloc0003@pread_heap+N>+40 (a block of 40 bytes, allocated at input.c:{PREAD_ALLOC}) written 48 bytes by pread, 0 bytes past its end, at input.c:{PREAD} (pread_heap+N)",
        "recv_heap  | fault   | heap overflow: <malloc0001@recv_heap+N>+32 (a block of 32 bytes, allocated at input.c:{RECV_ALLOC}) written 48 bytes by recvfrom, 0 bytes past its end, at input.c:{RECV} (recv_heap+N)",
        "recv_heap  | rewrite | heap overflow: <malloc0001@recv_heap+N>+32 (a block of 32 bytes, allocated at input.c:{RECV_ALLOC}) written 48 bytes by recv, 0 bytes past its end, at input.c:{RECV} (recv_heap+N)",
    })
    void runCheckSeesTheKernelsWrites(String name, String mode, String report) throws Exception {
        CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of("--mode", mode), Map.of(), "./input-plain", name, "bad");
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        assertThat(r.stderr().lines().findFirst().orElse("")).matches("memtrace: " + expected(report) + ", thread \\d+");
    }
}
