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
 * The input functions CheckInputTest's do not cover (docs/check.md, check_io.c): scan.c's scanf %s, sscanf %s, %'s, %ls
 * and %[...], fscanf %46c, swscanf %ls, fwscanf %s, fgetws, gets, readv and recvmsg 16 bytes too many into a heap block, a stack array and a global,
 * built {@code memtrace cc --check} at -O0, -O2 and -O2 -D_FORTIFY_SOURCE=2 (none of them has a {@code _chk} form
 * gcc calls there); the heap cases also under {@code memtrace run --check}: readv and recvmsg in both modes (fault
 * mode by the system call), sscanf in rewrite mode's wrapper. Each report names the object, the bytes the function
 * stored and the call's line; every twin is silent and prints what the plain build prints.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckScanTest {
    static final List<String> BUILDS = List.of("scan-O0", "scan-O2", "scan-O2F");
    Path dir;
    Path source;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.buildFourWays(dir, "scan");
    }

    private String expected(String report) throws Exception { return CheckBuilds.reportPattern(source, report); }

    // %s and %[ store the 48 characters and a terminator (%ls and fgetws: 4 bytes each), %*2c%46c 46; readv's
    // second buffer gets 48 - 16 bytes; fwscanf's %s into a char array two terminators (glibc writes wcrtomb's
    // L'\0' and then its own), which the stream call made into the runtime's %ms measures
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "scanf_stack       | stack overflow: <stack:word@scanf_stack>+32 (a variable of 32 bytes, declared at line {WORD} of scanf_stack) written 49 bytes by scanf, 0 bytes past its end, at scan.c:{SCANF} (scanf_stack+N)",
        "sscanf_heap       | heap overflow: <malloc0001@sscanf_heap+N>+32 (a block of 32 bytes, allocated at scan.c:{SSCANF_ALLOC}) written 49 bytes by sscanf, 0 bytes past its end, at scan.c:{SSCANF} (sscanf_heap+N)",
        "sscanf_set_global | global overflow: gword+32 (a global of 32 bytes, defined at scan.c:{GWORD}) written 49 bytes by sscanf, 0 bytes past its end, at scan.c:{SSCANF_SET} (sscanf_set_global+N)",
        "fscanf_chars_heap | heap overflow: <malloc0003@fscanf_chars_heap+N>+40 (a block of 40 bytes, allocated at scan.c:{FSCANF_ALLOC}) written 46 bytes by fscanf, 0 bytes past its end, at scan.c:{FSCANF} (fscanf_chars_heap+N)",
        "gets_stack        | stack overflow: <stack:line@gets_stack>+32 (a variable of 32 bytes, declared at line {LINE} of gets_stack) written 49 bytes by gets, 0 bytes past its end, at scan.c:{GETS} (gets_stack+N)",
        "readv_heap        | heap overflow: <malloc0001@readv_heap+N>+16 (a block of 16 bytes, allocated at scan.c:{READV_ALLOC}) written 32 bytes by readv, 0 bytes past its end, at scan.c:{READV} (readv_heap+N)",
        "recvmsg_heap      | heap overflow: <malloc0001@recvmsg_heap+N>+32 (a block of 32 bytes, allocated at scan.c:{RECVMSG_ALLOC}) written 48 bytes by recvmsg, 0 bytes past its end, at scan.c:{RECVMSG} (recvmsg_heap+N)",
        "sscanf_wide_heap  | heap overflow: <malloc0001@sscanf_wide_heap+N>+128 (a block of 128 bytes, allocated at scan.c:{SSCANF_WIDE_ALLOC}) written 196 bytes by sscanf, 0 bytes past its end, at scan.c:{SSCANF_WIDE} (sscanf_wide_heap+N)",
        "fgetws_stack      | stack overflow: <stack:line@fgetws_stack>+128 (a variable of 128 bytes, declared at line {WLINE} of fgetws_stack) written 196 bytes by fgetws, 0 bytes past its end, at scan.c:{FGETWS} (fgetws_stack+N)",
        "swscanf_heap      | heap overflow: <malloc0001@swscanf_heap+N>+128 (a block of 128 bytes, allocated at scan.c:{SWSCANF_ALLOC}) written 196 bytes by swscanf, 0 bytes past its end, at scan.c:{SWSCANF} (swscanf_heap+N)",
        "fwscanf_stack     | stack overflow: <stack:word@fwscanf_stack>+32 (a variable of 32 bytes, declared at line {FWWORD} of fwscanf_stack) written 50 bytes by fwscanf, 0 bytes past its end, at scan.c:{FWSCANF} (fwscanf_stack+N)",
        "sscanf_flag_heap  | heap overflow: <malloc0001@sscanf_flag_heap+N>+32 (a block of 32 bytes, allocated at scan.c:{SSCANF_FLAG_ALLOC}) written 49 bytes by sscanf, 0 bytes past its end, at scan.c:{SSCANF_FLAG} (sscanf_flag_heap+N)",
    })
    void anInputFunctionStoringPastItsBufferIsReportedAtItsCall(String name, String report) throws Exception {
        String want = "memtrace: " + expected(report) + ", thread \\d+";
        for (String b : BUILDS) {
            CheckBuilds.Run r = CheckBuilds.run(dir, Map.of(), "./" + b, name, "bad");
            assertThat(r.status()).as(b + " " + r.stderr()).isEqualTo(1);
            List<String> lines = r.stderr().lines().toList();
            assertThat(lines.getFirst()).as(b).matches(want);
            // glibc's inline fgetws wrapper of the fortified build is an inlined frame: it and its caller are listed
            assertThat(lines).as(b).hasSize(b.equals("scan-O2F") && name.equals("fgetws_stack") ? 3 : 1);
            assertThat(r.stdout()).as(b).isEmpty(); // stopped at the report
        }
    }

    @Test
    void theTwinsAreSilentWithThePlainOutput() throws Exception {
        CheckBuilds.Run plain = CheckBuilds.run(dir, Map.of(), "./scan-plain", "all", "good");
        assertThat(plain.stdout()).isEqualTo("done 1114\n");
        for (String b : BUILDS) {
            CheckBuilds.Run r = CheckBuilds.run(dir, Map.of(), "./" + b, "all", "good");
            assertThat(r.stderr()).as(b).isEmpty();
            assertThat(r.stdout()).as(b).isEqualTo(plain.stdout());
            assertThat(r.status()).as(b).isZero();
        }
        for (String mode : List.of("fault", "rewrite")) {
            CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of("--mode", mode), Map.of(), "./scan-plain", "all", "good");
            assertThat(r.stderr()).as(mode).isEmpty();
            assertThat(r.stdout()).as(mode).isEqualTo(plain.stdout());
        }
    }

    /** Unmodified: fault mode sees readv's and recvmsg's system calls (recvmsg's site is glibc's, which pushed a
     * frame), and sscanf's store into the heap by its fault; rewrite mode checks in the wrappers. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "readv_heap   | fault   | heap overflow: <malloc0001@readv_heap+N>+16 (a block of 16 bytes, allocated at scan.c:{READV_ALLOC}) written 32 bytes by readv, 0 bytes past its end, at scan.c:{READV} (readv_heap+N)",
        "readv_heap   | rewrite | heap overflow: <malloc0001@readv_heap+N>+16 (a block of 16 bytes, allocated at scan.c:{READV_ALLOC}) written 32 bytes by readv, 0 bytes past its end, at scan.c:{READV} (readv_heap+N)",
        "recvmsg_heap | fault   | heap overflow: <malloc0001@recvmsg_heap+N>+32 (a block of 32 bytes, allocated at scan.c:{RECVMSG_ALLOC}) written 48 bytes by recvmsg, 0 bytes past its end, at recvmsg+N",
        "recvmsg_heap | rewrite | heap overflow: <malloc0001@recvmsg_heap+N>+32 (a block of 32 bytes, allocated at scan.c:{RECVMSG_ALLOC}) written 48 bytes by recvmsg, 0 bytes past its end, at scan.c:{RECVMSG} (recvmsg_heap+N)",
        "sscanf_heap  | rewrite | heap overflow: <malloc0001@sscanf_heap+N>+32 (a block of 32 bytes, allocated at scan.c:{SSCANF_ALLOC}) written 49 bytes by sscanf, 0 bytes past its end, at scan.c:{SSCANF} (sscanf_heap+N)",
        "swscanf_heap | rewrite | heap overflow: <malloc0001@swscanf_heap+N>+128 (a block of 128 bytes, allocated at scan.c:{SWSCANF_ALLOC}) written 196 bytes by swscanf, 0 bytes past its end, at scan.c:{SWSCANF} (swscanf_heap+N)",
    })
    void runCheckSeesThem(String name, String mode, String report) throws Exception {
        CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of("--mode", mode), Map.of(), "./scan-plain", name, "bad");
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        assertThat(r.stderr().lines().findFirst().orElse("")).matches("memtrace: " + expected(report) + ", thread \\d+");
    }
}
