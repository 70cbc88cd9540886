package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code memtrace run --check}'s input functions into stack variables and globals (agent/check_input.c, fault
 * mode, which alone checks globals and these stack ranges): run_input.c, built by plain gcc, reads a word with
 * scanf %s into a local array and lines with gets, fgets, fgets_unlocked, getline, read, fgetws, wscanf %ls and
 * glibc 2.38's __isoc23_sscanf given more room than the global array has; built -O2 -D_FORTIFY_SOURCE=2, fgets,
 * fgetws and read are glibc's __fgets_chk, __fgetws_chk and __read_chk. Each overflow is reported after the call
 * by the function's name, with the variable (its function and declaration line, from DWARF) or the global (its
 * symbol), and the program's line, never a libc address; the twins, whose input fits, are silent with the
 * native output. Rewrite mode (the check runtime's check_io.c): getline past a heap block; fgets and fgetws past
 * a heap block and a local, checked before the line is stored, there and in a {@code memtrace cc --check} build
 * (the same check_io.c), with glibc's results at size 1, a last line without newline and the end of input;
 * sscanf and swscanf past a local far from the stack's top and sscanf past a heap block, checked before they
 * store in all three (check_scan.h's run aside); scanf from a file past a local far from the stack's top,
 * fscanf from a pipe past a heap block and scanf past a global, checked before they store in all three (the one
 * real call into the runtime's slots, check_scan.h's mc_fscan_run).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunCheckInputTest {
    private static final Map<String, String> GLOBALS = Map.of("MEMTRACE_CHECK", "globals");
    private static final List<String> FAULT = List.of("--mode", "fault");
    Path dir;
    Path source;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "run_input.c");
        for (String o : List.of("-O0", "-O2")) gcc("gcc", o, "-g", "-o", "run_input" + o, "run_input.c");
        gcc("gcc", "-O2", "-g", "-D_FORTIFY_SOURCE=2", "-o", "run_input-O2F", "run_input.c");
        CheckBuilds.build(dir, false, true, "-O0", "-g", "-o", "run_input-cc", "run_input.c");
    }

    private void gcc(String... args) throws Exception {
        Process p = new ProcessBuilder(args).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(out).isZero();
    }

    private static CheckBuilds.Run fault(Path dir, String depth, Map<String, String> env, String... command) throws Exception {
        List<String> options = new ArrayList<>(FAULT);
        if (depth != null) options.addAll(List.of("--stack-depth", depth));
        return CheckBuilds.runCheck(dir, options, env, command);
    }

    /** The report's first line (after "memtrace: ", before ", at"), then the frame of the call's line. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "-O0 | scanf | stack overflow: <stack:word@scan_word>+8 (a variable of 8 bytes, declared at line {WORD} of scan_word) written 9 bytes by scanf, 0 bytes past its end | SCANF | scan_word",
        "-O0 | gets  | global overflow: names+16 (a global of 16 bytes) written 17 bytes by gets, 0 bytes past its end | GETS | get_line",
        "-O0 | fgets | global overflow: names+16 (a global of 16 bytes) written 22 bytes by fgets, 0 bytes past its end | FGETS | fget_line",
        "-O2 | gets  | global overflow: names+16 (a global of 16 bytes) written 17 bytes by gets, 0 bytes past its end | GETS | get_line",
        "-O2 | fgets | global overflow: names+16 (a global of 16 bytes) written 22 bytes by fgets, 0 bytes past its end | FGETS | fget_line",
        "-O0 | fgets_unlocked | global overflow: names+16 (a global of 16 bytes) written 22 bytes by fgets, 0 bytes past its end | FGETS_UNLOCKED | fget_unlocked",
        "-O0 | getline | global overflow: names+16 (a global of 16 bytes) written 22 bytes by getline, 0 bytes past its end | GETLINE | get_line_global",
        "-O0 | fgetws | global overflow: wide+32 (a global of 32 bytes) written 48 bytes by fgetws, 0 bytes past its end | FGETWS | fget_wide",
        "-O0 | wscanf | global overflow: wide+32 (a global of 32 bytes) written 36 bytes by wscanf, 0 bytes past its end | WSCANF | scan_wide",
        "-O0 | isoc23 | global overflow: names+16 (a global of 16 bytes) written 21 bytes by sscanf, 0 bytes past its end | ISOC23 | scan_c23",
        "-O2F | fgets | global overflow: names+16 (a global of 16 bytes) written 22 bytes by fgets, 0 bytes past its end | FGETS | fget_line",
        "-O2F | read | global overflow: names+16 (a global of 16 bytes) written 21 bytes by read, 0 bytes past its end | READ | read_global",
        "-O2F | fgetws | global overflow: wide+32 (a global of 32 bytes) written 48 bytes by fgetws, 0 bytes past its end | FGETWS | main",
    })
    void anOverflowByAnInputFunctionIsReportedAtTheCallsLine(String opt, String name, String report, String at, String function)
            throws Exception {
        String want = report.contains("{WORD}") ? report.replace("{WORD}", String.valueOf(CheckBuilds.line(source, "WORD"))) : report;
        String exe = "run_input" + opt;
        CheckBuilds.Run r = fault(dir, "1", GLOBALS, "./" + exe, name, "bad");
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        List<String> lines = r.stderr().lines().toList();
        assertThat(lines).as(r.stderr()).hasSize(1);
        // the site as a --check build names it: its line (under _FORTIFY_SOURCE the inlined wrapper's, in its header)
        String line = opt.equals("-O2F") ? "/usr/include/.*\\.h:\\d+" : "run_input\\.c:" + CheckBuilds.line(source, at);
        assertThat(lines.get(0)).startsWith("memtrace: " + want + ", at ").matches(".*, at " + line + " \\(" + function + "\\+\\d+\\), thread \\d+");
        assertThat(r.stdout()).isEmpty(); // stopped at the report, before main printed
        // the call's source line: frame #0, or the frame under glibc's inline _FORTIFY_SOURCE wrapper (its header's line)
        CheckBuilds.Run two = fault(dir, "3", GLOBALS, "./" + exe, name, "bad");
        List<String> frames = two.stderr().lines().filter(l -> l.startsWith("    #")).toList();
        // gcc inlines fget_wide into main under -O2 -D_FORTIFY_SOURCE: its code is main's (.symtab), and the frames
        // name the inlined call
        String caller = function.equals("main") ? "fget_wide \\(inlined\\)" : function;
        String call = "run_input\\.c:" + CheckBuilds.line(source, at) + " \\(" + function + "\\+\\d+\\) in " + caller;
        if (opt.equals("-O2F")) {
            assertThat(frames).as(two.stderr()).hasSizeGreaterThan(1);
            assertThat(frames.get(0)).matches("    #0 /usr/include/.*\\.h:\\d+ \\(" + function + "\\+\\d+\\) in " + name + " \\(inlined\\)");
            assertThat(frames.get(1)).matches("    #1 " + call);
        } else {
            assertThat(frames).as(two.stderr()).isNotEmpty().element(0).asString().matches("    #0 " + call);
        }
    }

    /** Rewrite mode: the check runtime's scanf into a local, against its DWARF extent as in fault mode. */
    @Test
    void scanfIntoALocalInRewriteMode() throws Exception {
        String want = "memtrace: stack overflow: <stack:word@scan_word>+8 (a variable of 8 bytes, declared at line "
                + CheckBuilds.line(source, "WORD") + " of scan_word) written 9 bytes by scanf, 0 bytes past its end, at run_input.c:"
                + CheckBuilds.line(source, "SCANF") + " (scan_word+";
        CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of("--mode", "rewrite", "--stack-depth", "1"), Map.of(), "./run_input-O0", "scanf", "bad");
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        assertThat(r.stderr().lines().toList()).as(r.stderr()).hasSize(1).element(0).asString().startsWith(want);
        CheckBuilds.Run good = CheckBuilds.runCheck(dir, List.of("--mode", "rewrite"), Map.of(), "./run_input-O0", "scanf", "good");
        assertThat(good.stderr()).isEmpty();
        assertThat(good.status()).isZero();
        assertThat(good.stdout()).isEqualTo(CheckBuilds.run(dir, Map.of(), "./run_input-O0", "scanf", "good").stdout());
    }

    /** Rewrite mode: the check runtime's getline, past a block whose size the program gave larger than it is. */
    @Test
    void getlinePastAHeapBlockInRewriteMode() throws Exception {
        for (String opt : List.of("-O0", "-O2")) {
            String exe = "run_input" + opt;
            CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of("--mode", "rewrite", "--stack-depth", "1"), Map.of(), "./" + exe, "getline_heap", "bad");
            assertThat(r.status()).as(r.stderr()).isEqualTo(1);
            // -O2: the call is glibc's inline getline of bits/stdio.h, the line table's line for it
            String at = opt.equals("-O0") ? "run_input\\.c:" + CheckBuilds.line(source, "GETLINE_HEAP") : "/usr/include/x86_64-linux-gnu/bits/stdio\\.h:\\d+";
            assertThat(r.stderr().lines().toList()).as(r.stderr()).hasSize(1).element(0).asString().matches(
                    "memtrace: heap overflow: <malloc0001@get_line_heap\\+\\d+>\\+8 \\(a block of 8 bytes, allocated at run_input\\.c:"
                    + CheckBuilds.line(source, "GETLINE_HEAP_ALLOC") + "\\) written 22 bytes by getline, 0 bytes past its end, at " + at
                    + " \\(get_line_heap\\+\\d+\\), thread \\d+");
            CheckBuilds.Run good = CheckBuilds.runCheck(dir, List.of("--mode", "rewrite"), Map.of(), "./" + exe, "getline_heap", "good");
            assertThat(good.stderr()).isEmpty();
            assertThat(good.status()).isZero();
            assertThat(good.stdout()).isEqualTo(CheckBuilds.run(dir, Map.of(), "./" + exe, "getline_heap", "good").stdout());
        }
    }

    /**
     * Rewrite mode and a cc --check build: fgets and fgetws read the line aside and check it with its terminator
     * before a byte is stored (check_io.c). fgets_far's 256 KB line into an 8-byte local, which natively runs past
     * the stack's top and dies of SIGSEGV inside libc, is a report: nothing was written.
     */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "-O0 | fgets_heap  | heap overflow: <malloc0001@fget_heap\\+\\d+>\\+8 \\(a block of 8 bytes, allocated at run_input\\.c:{FGETS_HEAP_ALLOC}\\) written 18 bytes by fgets | run_input\\.c:{FGETS_HEAP} \\(fget_heap\\+\\d+\\)",
        "-O2 | fgets_heap  | heap overflow: <malloc0001@fget_heap\\+\\d+>\\+8 \\(a block of 8 bytes, allocated at run_input\\.c:{FGETS_HEAP_ALLOC}\\) written 18 bytes by fgets | run_input\\.c:{FGETS_HEAP} \\(fget_heap\\+\\d+\\)",
        "-O0 | fgetws_heap | heap overflow: <malloc0001@fget_wide_heap\\+\\d+>\\+16 \\(a block of 16 bytes, allocated at run_input\\.c:{FGETWS_HEAP_ALLOC}\\) written 48 bytes by fgetws | run_input\\.c:{FGETWS_HEAP} \\(fget_wide_heap\\+\\d+\\)",
        // -O2: gcc inlined fget_wide_heap into main, which holds the code (--stack-depth 1: no inlined frames)
        "-O2 | fgetws_heap | heap overflow: <malloc0001@main\\+\\d+>\\+16 \\(a block of 16 bytes, allocated at run_input\\.c:{FGETWS_HEAP_ALLOC}\\) written 48 bytes by fgetws | run_input\\.c:{FGETWS_HEAP} \\(main\\+\\d+\\)",
        "-O0 | fgets_stack | stack overflow: <stack:line@fget_stack>\\+8 \\(a variable of 8 bytes, declared at line {LINE} of fget_stack\\) written 18 bytes by fgets | run_input\\.c:{FGETS_STACK} \\(fget_stack\\+\\d+\\)",
        "-O0 | fgets_far   | stack overflow: <stack:line@fget_far>\\+8 \\(a variable of 8 bytes, declared at line {FAR_LINE} of fget_far\\) written 262144 bytes by fgets | run_input\\.c:{FGETS_FAR} \\(fget_far\\+\\d+\\)",
    })
    void fgetsPastItsBufferIsReportedBeforeItStoresInRewriteMode(String opt, String name, String report, String site) throws Exception {
        String exe = "run_input" + opt;
        String want = "memtrace: " + lines(report) + ", 0 bytes past its end, at " + lines(site) + ", thread \\d+";
        CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of("--stack-depth", "1"), Map.of(), "./" + exe, name, "bad");
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        assertThat(r.stderr().lines().toList()).as(r.stderr()).hasSize(1).element(0).asString().matches(want);
        assertThat(r.stdout()).isEmpty();
        CheckBuilds.Run good = CheckBuilds.runCheck(dir, List.of(), Map.of(), "./" + exe, name, "good");
        assertThat(good.stderr()).isEmpty();
        assertThat(good.status()).isZero();
        assertThat(good.stdout()).isEqualTo(CheckBuilds.run(dir, Map.of(), "./" + exe, name, "good").stdout()).startsWith("done ");
        if (name.equals("fgets_far")) assertThat(CheckBuilds.run(dir, Map.of(), "./" + exe, name, "bad").status()).isEqualTo(128 + 11);
    }

    /** The same wrappers in a cc --check build: the report names the call's and the allocation's lines. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "fgets_heap  | heap overflow: <malloc0001@fget_heap+N>+8 (a block of 8 bytes, allocated at run_input.c:{FGETS_HEAP_ALLOC}) written 18 bytes by fgets, 0 bytes past its end, at run_input.c:{FGETS_HEAP} (fget_heap+N)",
        "fgetws_heap | heap overflow: <malloc0001@fget_wide_heap+N>+16 (a block of 16 bytes, allocated at run_input.c:{FGETWS_HEAP_ALLOC}) written 48 bytes by fgetws, 0 bytes past its end, at run_input.c:{FGETWS_HEAP} (fget_wide_heap+N)",
        "fgets_stack | stack overflow: <stack:line@fget_stack>+8 (a variable of 8 bytes, declared at line {LINE} of fget_stack) written 18 bytes by fgets, 0 bytes past its end, at run_input.c:{FGETS_STACK} (fget_stack+N)",
        "fgets_far   | stack overflow: <stack:line@fget_far>+8 (a variable of 8 bytes, declared at line {FAR_LINE} of fget_far) written 262144 bytes by fgets, 0 bytes past its end, at run_input.c:{FGETS_FAR} (fget_far+N)",
    })
    void fgetsPastItsBufferIsReportedBeforeItStoresInACheckBuild(String name, String report) throws Exception {
        CheckBuilds.Run r = CheckBuilds.run(dir, Map.of(), "./run_input-cc", name, "bad");
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        assertThat(r.stderr().lines().toList()).as(r.stderr()).hasSize(1).element(0).asString()
                .matches("memtrace: " + CheckBuilds.reportPattern(source, report) + ", thread \\d+");
        CheckBuilds.Run good = CheckBuilds.run(dir, Map.of(), "./run_input-cc", name, "good");
        assertThat(good.stderr()).isEmpty();
        assertThat(good.status()).isZero();
        assertThat(good.stdout()).isEqualTo(CheckBuilds.run(dir, Map.of(), "./run_input-O0", name, "good").stdout());
    }

    /** glibc's results at the edges, kept: size 1 stores the terminator alone and returns the buffer, a last line
     * without its newline is returned as it is, the end of input returns NULL with the buffer as it was, size 0 NULL. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "fgets_edges  | one 1 [] last 1 [ab] eof 1 1 [xyz] 1",
        "fgetws_edges | one 1 [] last 1 [ab] eof 1 [xyz] 1",
    })
    void fgetsAtItsEdgesAnswersAsGlibc(String name, String line) throws Exception {
        String want = line + "\ndone 0 after after\n";
        assertThat(CheckBuilds.run(dir, Map.of(), "./run_input-O0", name, "good").stdout()).isEqualTo(want);
        for (String opt : List.of("-O0", "-O2")) {
            CheckBuilds.Run r = CheckBuilds.runCheck(dir, List.of(), Map.of(), "./run_input" + opt, name, "good");
            assertThat(r.stderr()).as(opt).isEmpty();
            assertThat(r.stdout()).as(opt).isEqualTo(want);
        }
        CheckBuilds.Run cc = CheckBuilds.run(dir, Map.of(), "./run_input-cc", name, "good");
        assertThat(cc.stderr()).isEmpty();
        assertThat(cc.stdout()).isEqualTo(want);
    }

    /** A pattern's {KEY}s as the lines of their markers in run_input.c. */
    private String lines(String pattern) throws Exception {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\{(\\w+)\\}").matcher(pattern);
        StringBuilder b = new StringBuilder();
        while (m.find()) m.appendReplacement(b, String.valueOf(CheckBuilds.line(source, m.group(1))));
        return m.appendTail(b).toString();
    }

    @Test
    void theTwinsAreSilentWithTheNativeOutput() throws Exception {
        for (String opt : List.of("-O0", "-O2", "-O2F")) {
            String exe = "./run_input" + opt;
            for (String c : List.of("all", "fgetws", "wscanf")) {   // all: every narrow case in one run
                CheckBuilds.Run native_ = CheckBuilds.run(dir, Map.of(), exe, c, "good");
                CheckBuilds.Run good = fault(dir, null, GLOBALS, exe, c, "good");
                assertThat(good.stderr()).as(opt + " " + c).isEmpty();
                assertThat(good.status()).isZero();
                assertThat(good.stdout()).isEqualTo(native_.stdout()).startsWith("done ");
            }
        }
    }

    /**
     * What is not seen: at -O2 scan_word keeps no frame pointer, so its local is unknown and the overflow (one
     * byte, which does not crash natively) runs as natively; without MEMTRACE_CHECK=globals no global is checked.
     */
    @Test
    void optimisedFramesAndUnaskedGlobalsRunAsNatively() throws Exception {
        for (String[] c : List.of(new String[] {"-O2", "scanf"}, new String[] {"-O0", "gets"}, new String[] {"-O0", "fgets"})) {
            String exe = "./run_input" + c[0];
            CheckBuilds.Run native_ = CheckBuilds.run(dir, Map.of(), exe, c[1], "bad");
            CheckBuilds.Run r = fault(dir, null, Map.of(), exe, c[1], "bad");
            assertThat(r.stderr()).as(c[0] + " " + c[1]).isEmpty();
            assertThat(r.status()).isZero();
            assertThat(r.stdout()).isEqualTo(native_.stdout());
        }
    }

    /**
     * sscanf is run aside into the runtime's memory first and each destination checked before the real call
     * stores (check_scan.h): sscanf_far's 256 KB word into an 8-byte local, which natively (and checked after the
     * call) runs past the stack's top and dies of SIGSEGV inside libc, is a report in a cc --check build on the
     * real stack (MEMTRACE_CHECK=noreturn: no fake frame), in run --check's rewrite mode and in fault mode; the
     * same for swscanf's %ls; swscanf's %s into a char array, whose two terminators (glibc's) overflow by one; the
     * heap block's overflow (not fatal natively) in cc --check and rewrite mode.
     */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "cc      | sscanf_far  | stack overflow: <stack:word@sscan_far>+8 (a variable of 8 bytes, declared at line {SSCANF_FAR_WORD} of sscan_far) written 262144 bytes by sscanf, 0 bytes past its end, at run_input.c:{SSCANF_FAR} (sscan_far+N)",
        "rewrite | sscanf_far  | stack overflow: <stack:word@sscan_far>+8 (a variable of 8 bytes, declared at line {SSCANF_FAR_WORD} of sscan_far) written 262144 bytes by sscanf, 0 bytes past its end, at run_input.c:{SSCANF_FAR} (sscan_far+N)",
        "fault   | sscanf_far  | stack overflow: <stack:word@sscan_far>+8 (a variable of 8 bytes, declared at line {SSCANF_FAR_WORD} of sscan_far) written 262144 bytes by sscanf, 0 bytes past its end, at run_input.c:{SSCANF_FAR} (sscan_far+N)",
        "cc      | swscanf_far | stack overflow: <stack:word@swscan_far>+8 (a variable of 8 bytes, declared at line {SWSCANF_FAR_WORD} of swscan_far) written 262144 bytes by swscanf, 0 bytes past its end, at run_input.c:{SWSCANF_FAR} (swscan_far+N)",
        "rewrite | swscanf_far | stack overflow: <stack:word@swscan_far>+8 (a variable of 8 bytes, declared at line {SWSCANF_FAR_WORD} of swscan_far) written 262144 bytes by swscanf, 0 bytes past its end, at run_input.c:{SWSCANF_FAR} (swscan_far+N)",
        "fault   | swscanf_far | stack overflow: <stack:word@swscan_far>+8 (a variable of 8 bytes, declared at line {SWSCANF_FAR_WORD} of swscan_far) written 262144 bytes by swscanf, 0 bytes past its end, at run_input.c:{SWSCANF_FAR} (swscan_far+N)",
        "cc      | swscanf_narrow | stack overflow: <stack:b@swscan_narrow>+4 (a variable of 4 bytes, declared at line {SWSCANF_NARROW_WORD} of swscan_narrow) written 5 bytes by swscanf, 0 bytes past its end, at run_input.c:{SWSCANF_NARROW} (swscan_narrow+N)",
        "rewrite | swscanf_narrow | stack overflow: <stack:b@swscan_narrow>+4 (a variable of 4 bytes, declared at line {SWSCANF_NARROW_WORD} of swscan_narrow) written 5 bytes by swscanf, 0 bytes past its end, at run_input.c:{SWSCANF_NARROW} (swscan_narrow+N)",
        "fault   | swscanf_narrow | stack overflow: <stack:b@swscan_narrow>+4 (a variable of 4 bytes, declared at line {SWSCANF_NARROW_WORD} of swscan_narrow) written 5 bytes by swscanf, 0 bytes past its end, at run_input.c:{SWSCANF_NARROW} (swscan_narrow+N)",
        "cc      | sscanf_heap | heap overflow: <malloc0001@sscan_heap+N>+8 (a block of 8 bytes, allocated at run_input.c:{SSCANF_HEAP_ALLOC}) written 17 bytes by sscanf, 0 bytes past its end, at run_input.c:{SSCANF_HEAP} (sscan_heap+N)",
        "rewrite | sscanf_heap | heap overflow: <malloc0001@sscan_heap+N>+8 (a block of 8 bytes, allocated at run_input.c:{SSCANF_HEAP_ALLOC}) written 17 bytes by sscanf, 0 bytes past its end, at run_input.c:{SSCANF_HEAP} (sscan_heap+N)",
    })
    void sscanfPastItsDestinationIsReportedBeforeItStores(String how, String name, String report) throws Exception {
        CheckBuilds.Run r = scanRun(how, name, "bad");
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        assertThat(r.stderr().lines().toList()).as(r.stderr()).hasSize(1).element(0).asString()
                .matches("memtrace: " + CheckBuilds.reportPattern(source, report) + ", thread \\d+");
        assertThat(r.stdout()).isEmpty();
        if (name.endsWith("_far")) assertThat(CheckBuilds.run(dir, Map.of(), "./run_input-O0", name, "bad").status()).isEqualTo(128 + 11);
    }

    /** The twins, whose words fit, answer as natively: the count, the numbers, %c, %n, %[, errno (ERANGE). */
    @ParameterizedTest
    @CsvSource({"cc, sscanf_far", "rewrite, sscanf_far", "fault, sscanf_far", "cc, swscanf_far", "rewrite, swscanf_far",
        "fault, swscanf_far", "cc, swscanf_narrow", "rewrite, swscanf_narrow", "fault, swscanf_narrow", "cc, sscanf_heap", "rewrite, sscanf_heap", "fault, sscanf_heap"})
    void sscanfThatFitsAnswersAsNatively(String how, String name) throws Exception {
        CheckBuilds.Run native_ = CheckBuilds.run(dir, Map.of(), "./run_input-O0", name, "good");
        if (name.equals("sscanf_heap"))
            assertThat(native_.stdout()).startsWith("sscanf 6 12 0123456 2.5 x 9223372036854775807 41 yz errno 34 canary\n");
        CheckBuilds.Run good = scanRun(how, name, "good");
        assertThat(good.stderr()).isEmpty();
        assertThat(good.status()).isZero();
        assertThat(good.stdout()).isEqualTo(native_.stdout()).contains("done ");
    }

    /**
     * scanf and fscanf, whose stream cannot be read twice, make their one real call into the runtime's slots (%s
     * as glibc's %ms, check_scan.h) and each range is checked before it is copied: scanf_far's 256 KB word from a
     * file into an 8-byte local, which natively runs past the stack's top and dies of SIGSEGV inside libc, is a
     * report in all three; fscanf's %[ from a pipe past a heap block, and scanf's %20c past a 16-byte global.
     */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "cc      | scanf_far    | stack overflow: <stack:word@scan_far>+8 (a variable of 8 bytes, declared at line {SCANF_FAR_WORD} of scan_far) written 262145 bytes by scanf, 0 bytes past its end, at run_input.c:{SCANF_FAR} (scan_far+N)",
        "rewrite | scanf_far    | stack overflow: <stack:word@scan_far>+8 (a variable of 8 bytes, declared at line {SCANF_FAR_WORD} of scan_far) written 262145 bytes by scanf, 0 bytes past its end, at run_input.c:{SCANF_FAR} (scan_far+N)",
        "fault   | scanf_far    | stack overflow: <stack:word@scan_far>+8 (a variable of 8 bytes, declared at line {SCANF_FAR_WORD} of scan_far) written 262145 bytes by scanf, 0 bytes past its end, at run_input.c:{SCANF_FAR} (scan_far+N)",
        "cc      | fscanf_heap  | heap overflow: <malloc0001@fscan_heap+N>+8 (a block of 8 bytes, allocated at run_input.c:{FSCANF_HEAP_ALLOC}) written 15 bytes by fscanf, 0 bytes past its end, at run_input.c:{FSCANF_HEAP} (fscan_heap+N)",
        "rewrite | fscanf_heap  | heap overflow: <malloc0001@fscan_heap+N>+8 (a block of 8 bytes, allocated at run_input.c:{FSCANF_HEAP_ALLOC}) written 15 bytes by fscanf, 0 bytes past its end, at run_input.c:{FSCANF_HEAP} (fscan_heap+N)",
        "fault   | fscanf_heap  | heap overflow: <malloc0001@fscan_heap+N>+8 (a block of 8 bytes, allocated at run_input.c:{FSCANF_HEAP_ALLOC}) written 15 bytes by fscanf, 0 bytes past its end, at run_input.c:{FSCANF_HEAP} (fscan_heap+N)",
        "cc      | scanf_global | global overflow: names+16 (a global of 16 bytes, defined at run_input.c:{NAMES}) written 20 bytes by scanf, 0 bytes past its end, at run_input.c:{SCANF_GLOBAL} (scan_global+N)",
        "rewrite | scanf_global | global overflow: names+16 (a global of 16 bytes) written 20 bytes by scanf, 0 bytes past its end, at run_input.c:{SCANF_GLOBAL} (scan_global+N)",
        "fault   | scanf_global | global overflow: names+16 (a global of 16 bytes) written 20 bytes by scanf, 0 bytes past its end, at run_input.c:{SCANF_GLOBAL} (scan_global+N)",
    })
    void streamScanfPastItsDestinationIsReportedBeforeItStores(String how, String name, String report) throws Exception {
        sscanfPastItsDestinationIsReportedBeforeItStores(how, name, report);
    }

    /**
     * The stream twins answer as natively: the count, the numbers of every size, %n and %hhn, %5s, %[, %3c, %3ls,
     * errno (ERANGE), what the stream still holds (scanf_far's next word), a partial match and the end of input.
     */
    @ParameterizedTest
    @CsvSource({"cc, scanf_far", "rewrite, scanf_far", "fault, scanf_far", "cc, fscanf_heap", "rewrite, fscanf_heap",
        "fault, fscanf_heap", "cc, scanf_global", "rewrite, scanf_global", "fault, scanf_global"})
    void streamScanfThatFitsAnswersAsNatively(String how, String name) throws Exception {
        CheckBuilds.Run native_ = CheckBuilds.run(dir, Map.of(), "./run_input-O0", name, "good");
        if (name.equals("fscanf_heap"))
            assertThat(native_.stdout()).isEqualTo("fscanf 10 12 abcde 8 letters xyz 2.5 9223372036854775807 4464 wid 55 letters "
                    + "errno 34 canary\npartial 1 4 8 -1\neof -1 1 xyz\ndone -1 after after\n");
        if (name.equals("scanf_far")) assertThat(native_.stdout()).startsWith("scanf seven77 1 next\n");
        CheckBuilds.Run good = scanRun(how, name, "good");
        assertThat(good.stderr()).isEmpty();
        assertThat(good.status()).isZero();
        assertThat(good.stdout()).isEqualTo(native_.stdout()).contains("done ");
    }

    private CheckBuilds.Run scanRun(String how, String name, String input) throws Exception {
        return switch (how) {
            case "cc" -> CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK", "noreturn"), "./run_input-cc", name, input);
            case "rewrite" -> CheckBuilds.runCheck(dir, List.of("--stack-depth", "1"), Map.of(), "./run_input-O0", name, input);
            default -> fault(dir, "1", GLOBALS, "./run_input-O0", name, input);
        };
    }
}
