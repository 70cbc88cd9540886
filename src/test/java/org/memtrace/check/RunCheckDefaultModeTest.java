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
import org.memtrace.testutil.Gcc;

/**
 * {@code memtrace run --check} without {@code --mode} rewrites (docs/check.md, "Which mode run --check defaults
 * to"), and what rewrite mode checks beyond the heap: run_rewrite_extra.c built by plain gcc -O0 -g overflows a
 * global array by a loop, a global struct by memset and a global char array by strcpy, each into the alignment
 * padding before the next global ("Globals in rewrite mode"), a global char array by strcpy into the global right
 * after it (no padding: the object its pointer is in), reads .data's first global at -1, and smashes its frame's return address by a
 * memcpy gcc expanded into moves ("Stack smashes in rewrite mode"). Every report is one exact line; the twins
 * run silent with the native output; the summary's rewrite counts show the mode, and fault mode (asked for)
 * does not see the global overflow without MEMTRACE_CHECK=globals; an executable that cannot be rewritten is
 * checked by faults.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunCheckDefaultModeTest {
    Path dir, source;

    private int line(String key) throws Exception {
        return CheckBuilds.line(source, key);
    }

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "run_rewrite_extra.c");
        for (String[] b : new String[][] {{"-O0", "extra"}, {"-O2", "extra-O2"}}) {
            Process p = new ProcessBuilder("gcc", b[0], "-g", "-w", "-o", b[1], "run_rewrite_extra.c").directory(dir.toFile())
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            assertThat(p.waitFor()).as(out).isZero();
        }
    }

    /**
     * The same two checks at -O2, where gcc lays .bss out in another order (label last: nothing follows it but the
     * page's end, still past the object its pointer is in) and indexes level_table from a lea'd register; the
     * twins silent with the native output.
     */
    @Test
    void theObjectChecksHoldAtO2AndTheTwinsStaySilent() throws Exception {
        CheckBuilds.Run adjacent = CheckBuilds.runCheck(dir, List.of(), Map.of(), "./extra-O2", "adjacent", "bad");
        assertThat(adjacent.status()).as(adjacent.stderr()).isEqualTo(1);
        assertThat(adjacent.stderr().lines().findFirst().orElse("")).matches("memtrace: global overflow: label\\+16 \\(a global of 16 "
                + "bytes\\) written 21 bytes by strcpy, 0 bytes past its end, at run_rewrite_extra\\.c:" + line("ADJACENT")
                + " \\(main\\+\\d+\\), thread \\d+"); // adjacent() and under() inlined into main at -O2
        CheckBuilds.Run under = CheckBuilds.runCheck(dir, List.of(), Map.of(), "./extra-O2", "under", "bad");
        assertThat(under.status()).as(under.stderr()).isEqualTo(1);
        assertThat(under.stderr().lines().findFirst().orElse("")).matches("memtrace: global underflow: level_table-8 \\(a global of 64 "
                + "bytes\\) read 8 bytes, 8 bytes before its start, at run_rewrite_extra\\.c:" + line("UNDER") + " \\(main\\+\\d+\\), thread \\d+");
        CheckBuilds.Run native_ = CheckBuilds.run(dir, Map.of(), "./extra-O2", "all", "good");
        CheckBuilds.Run good = CheckBuilds.runCheck(dir, List.of(), Map.of(), "./extra-O2", "all", "good");
        assertThat(good.stderr()).isEmpty();
        assertThat(good.status()).isZero();
        assertThat(good.stdout()).isEqualTo(native_.stdout()).endsWith("done\n");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "loop   | global overflow: counts+40 (a global of 40 bytes) written 4 bytes, 0 bytes past its end | LOOP | loop",
        "memset | global overflow: current+24 (a global of 24 bytes) written 25 bytes by memset, 0 bytes past its end | MEMSET | clear",
        "strcpy | global overflow: names+20 (a global of 20 bytes) written 24 bytes by strcpy, 0 bytes past its end | STRCPY | copy",
        // no padding after label: strcpy's range is checked against the global its pointer is in
        "adjacent | global overflow: label+16 (a global of 16 bytes) written 21 bytes by strcpy, 0 bytes past its end | ADJACENT | adjacent",
        // .data's first object, after crtstuff's __dso_handle (8 bytes, no size in .symtab) and 16 bytes of padding
        "under  | global underflow: level_table-8 (a global of 64 bytes) read 8 bytes, 8 bytes before its start | UNDER | under",
    })
    void aGlobalOverflowOrUnderflowIsReported(String name, String report, String at, String function) throws Exception {
        CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of(), Map.of(), "./extra", name, "bad");
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        List<String> lines = r.stderr().lines().toList();
        String site = "run_rewrite_extra.c:" + line(at) + " (" + function + "+";
        assertThat(lines.get(0)).startsWith("memtrace: " + report + ", at " + site).matches(".*\\+\\d+\\), thread \\d+");
        // then its frames with their lines, as fault mode gives them: the function that overflowed, then main
        assertThat(lines.subList(1, lines.size())).as(r.stderr()).hasSize(2);
        assertThat(lines.get(1)).startsWith("    #0 " + site).matches(".*\\+\\d+\\) in " + function);
        assertThat(lines.get(2)).matches("    #1 run_rewrite_extra\\.c:\\d+ \\(main\\+\\d+\\) in main");
        assertThat(r.stdout()).isEmpty(); // stopped at the report, before the program's line
    }

    /** The return address that gcc's inline moves overwrote is found when the ret takes it, as in fault mode. */
    @Test
    void anInlinedMemcpyOverItsReturnAddressIsAStackSmash() throws Exception {
        CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of(), Map.of(), "./extra", "smash", "bad");
        assertThat(r.status()).as(r.stderr()).isEqualTo(139);
        List<String> lines = r.stderr().lines().toList();
        assertThat(lines).as(r.stderr()).hasSize(2);
        // the ret runs in place: the -O0 function's frame slots before it are not patched (nothing to check there),
        // so nothing moved it into a trampoline and its function is named, as fault mode names it
        assertThat(lines.get(0)).matches("memtrace: stack overflow: <stack:return address@smash> \\(the return address in smash's frame, "
                + "overwritten with 0x4343434343434343: a stack smash, found at its return\\) read 8 bytes, at run_rewrite_extra.c:\\d+ "
                + "\\(smash\\+\\d+\\), thread \\d+");
        assertThat(lines.get(1)).startsWith("memtrace: the program was killed by SIGSEGV (signal 11)");
    }

    @Test
    void theTwinsAreSilentWithTheNativeOutputAndTheRunIsRewritten() throws Exception {
        CheckBuilds.Run native_ = CheckBuilds.run(dir, Map.of(), "./extra", "all", "good");
        CheckBuilds.Run good = CheckBuilds.runCheck(dir, List.of(), Map.of("MEMTRACE_CHECK", "summary"), "./extra", "all", "good");
        assertThat(good.status()).as(good.stderr()).isZero();
        assertThat(good.stdout()).isEqualTo(native_.stdout()).endsWith("done\n");
        List<String> lines = good.stderr().lines().toList();
        assertThat(lines.getFirst()).startsWith("memtrace: check summary: ").endsWith("; 0 errors");
        // the rewrite's own count: only a rewrite run has it
        assertThat(lines.get(1)).matches("memtrace: check: \\d+ memory instructions of \\./extra checked, .*0 left unchecked");
    }

    /**
     * An executable rewrite mode cannot plan (its trampolines out of reach: RunDefaultModeTest's) is checked in fault
     * mode instead, with fault mode's checks on: its agent's summary, which a fault run without them never prints.
     * (noleaks: the leak scan would read the 2 GB .bss.)
     */
    @Test
    void anExecutableThatCannotBeRewrittenIsCheckedByFaults() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_huge_bss.c", "huge", "-O1", "-no-pie", "-mcmodel=medium", "-Wl,-Ttext-segment=0x10000");
        CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of(), Map.of("MEMTRACE_CHECK", "summary,noleaks"), prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo("3\n");
        List<String> lines = r.stderr().lines().toList();
        assertThat(lines).as(r.stderr()).hasSize(2);
        assertThat(lines.get(0)).isEqualTo("memtrace: cannot rewrite " + prog + " (" + prog + ": its trampolines (up to 1 MB) fit neither below its "
                + "code nor above it within 2 GB); checking it by page faults instead (--mode fault)");
        assertThat(lines.get(1)).matches("memtrace: check summary: [1-9]\\d* accesses checked by .*; 0 errors");
    }

    /**
     * An executable whose code makes no access the check plans (main only calls libc at -O2) is applied all the
     * same, with nothing to arm for access stacks (asked for by --access-stacks): the wrapper's report alone, no
     * line about the module (the arming once failed on an empty plan and left the module unrewritten), and the
     * twin silent.
     */
    @Test
    void anExecutableWithNothingToCheckIsStillRewritten() throws Exception {
        Path prog = Gcc.compile(dir, "run_calls_only.c", "calls", "-O2", "-g");
        String file = Pattern.quote(dir.resolve("run_calls_only.c").toString()); // compiled by its absolute path
        CheckBuilds.Run bad = CheckBuilds.runCheck(dir, List.of("--access-stacks"), Map.of(), prog.toString());
        assertThat(bad.status()).as(bad.stderr()).isEqualTo(1);
        assertThat(bad.stderr().lines().toList()).as(bad.stderr()).hasSize(1).first().asString()
                .matches("memtrace: heap overflow: <malloc0001@main\\+\\d+>\\+10 \\(a block of 10 bytes, allocated at " + file + ":11\\) "
                        + "written 11 bytes by memset, 0 bytes past its end, at " + file + ":12 \\(main\\+\\d+\\), thread \\d+");
        CheckBuilds.Run good = CheckBuilds.runCheck(dir, List.of(), Map.of(), prog.toString(), "good");
        assertThat(good.stderr()).isEmpty();
        assertThat(good.status()).isZero();
        assertThat(good.stdout()).isEqualTo("aaaaaaaaa\n");
    }

    @Test
    void faultModeIsStillThereWhenAskedFor() throws Exception {
        CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of("--mode", "fault"), Map.of(), "./extra", "loop", "bad");
        assertThat(r.stderr()).isEmpty(); // its globals are checked only with MEMTRACE_CHECK=globals
        assertThat(r.status()).isZero();
        assertThat(r.stdout()).isEqualTo("loop 9 18\ndone\n");
    }
}
