package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * Allocation and free stacks of code built without frame pointers ({@code -O2 -fomit-frame-pointer}), unwound by
 * each module's .eh_frame (docs/stacks.md, "How the frames are found"): malloc three calls below main and below
 * a thread's start, a free one call below, and malloc from a qsort comparator, under libc's sort (which keeps no
 * frame pointer either). Each stack is asserted frame by frame with file:line, in fault mode, in rewrite mode and
 * built with {@code memtrace cc}; frames in libc by function name alone (their offsets and lines are the
 * distribution's).
 */
class StackUnwindTest {
    @TempDir static Path dir;

    @BeforeAll
    static void build() throws Exception {
        Gcc.compile(dir, "unwind_o2.c", "unwind", "-O2", "-fomit-frame-pointer", "-g", "-pthread");
        Cli.Result cc = Cli.run(dir, "cc", "-O2", "-fomit-frame-pointer", "-g", "-pthread", "-o", dir.resolve("unwind-cc").toString(),
                dir.resolve("unwind_o2.c").toString());
        assertThat(cc.status()).as(cc.stderr()).isZero();
    }

    /**
     * "M" or "F" and the stack of each allocation and free of the blocks leaf() made, in the trace's order; frames
     * outside the program by function name alone, the program's offsets cut when {@code offsets} is false.
     */
    private static List<String> stacks(String program, boolean offsets, String... options) throws Exception {
        Path trace = dir.resolve(program + String.join("", options).replace("-", "") + ".trace");
        List<String> args = new ArrayList<>(List.of("run", "-q", "-o", trace.toString()));
        // fault mode unless the case names its mode
        if (!List.of(options).contains("--mode")) args.addAll(List.of("--mode", "fault"));
        args.addAll(List.of(options));
        args.addAll(List.of("--", dir.resolve(program).toString()));
        Cli.Result r = Cli.run(dir, args.toArray(String[]::new));
        assertThat(r.status()).as(r.stderr()).isZero();
        Map<String, String> stacks = new HashMap<>();
        List<String> out = new ArrayList<>();
        for (String line : Files.readAllLines(trace)) {
            line = line.replace(dir + "/", "");
            if (line.startsWith("# stack ")) {
                String[] f = line.split(" ", 4);
                List<String> frames = new ArrayList<>();
                for (String frame : f[3].split(" ")) {
                    if (!frame.contains("(unwind_o2.c:")) frame = frame.replaceAll("[+(].*", "");
                    else if (!offsets) frame = frame.replaceAll("\\+\\d+", "");
                    frames.add(frame);
                }
                stacks.put("s" + f[2], String.join(" ", frames));
            } else if (line.matches("[MF]\\$\\d+:<(malloc|freed:)\\d+@leaf\\+\\d+>,.*,s\\d+")) {
                out.add(line.charAt(0) + " " + stacks.get(line.substring(line.lastIndexOf(',') + 1)));
            }
        }
        return out;
    }

    private static List<String> expected(boolean offsets) {
        List<String> lines = List.of(
                "M leaf+9(unwind_o2.c:9) middle+12(unwind_o2.c:16) outer+13(unwind_o2.c:23) main+14(unwind_o2.c:48)",
                "F drop+9(unwind_o2.c:30) main+22(unwind_o2.c:49)",
                "M leaf+9(unwind_o2.c:9) middle+12(unwind_o2.c:16) outer+13(unwind_o2.c:23) worker+9(unwind_o2.c:36)",
                "F drop+9(unwind_o2.c:30) worker+17(unwind_o2.c:36) start_thread clone3",
                "M leaf+9(unwind_o2.c:9) compare+22(unwind_o2.c:42) msort_with_tmp.part.0 msort_with_tmp qsort_r",
                "F drop+9(unwind_o2.c:30) compare+30(unwind_o2.c:42) msort_with_tmp.part.0 msort_with_tmp qsort_r");
        return offsets ? lines : lines.stream().map(l -> l.replaceAll("\\+\\d+", "")).toList();
    }

    @Test
    void faultModeUnwindsCodeWithoutFramePointers() throws Exception {
        assertThat(stacks("unwind", true, "--stack-depth", "4")).containsExactlyElementsOf(expected(true));
    }

    @Test
    void rewriteModeHasTheSameStacks() throws Exception {
        assertThat(stacks("unwind", true, "--mode", "rewrite", "--stack-depth", "4")).containsExactlyElementsOf(expected(true));
    }

    @Test
    void compiledInHasTheSameStacks() throws Exception {
        assertThat(stacks("unwind-cc", false, "--stack-depth", "4")).containsExactlyElementsOf(expected(false));
    }

    /** A stripped program's main has no name: its stacks end above libc's caller of main all the same. */
    @Test
    void strippedProgramsStacksEndAtMain() throws Exception {
        Gcc.strip(dir.resolve("unwind"), "unwind-stripped");
        Path trace = dir.resolve("stripped.trace");
        Cli.Result r = Cli.run(dir, "run", "--mode", "fault", "-q", "-o", trace.toString(), "--stack-depth", "12", "--", dir.resolve("unwind-stripped").toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        String first = Files.readAllLines(trace).stream().filter(l -> l.startsWith("# stack ")).findFirst().orElseThrow();
        // leaf, middle, outer, main: unnamed in the program, nothing of libc's start-up after them
        assertThat(first).matches("# stack 1( unwind-stripped\\+0x[0-9a-f]+){4}");
    }

    /** Deeper, the comparator's stack goes through libc's sort back to main; a thread's ends at its start. */
    @Test
    void deeperStacksReachMainThroughLibc() throws Exception {
        List<String> deep = stacks("unwind", true, "--stack-depth", "12");
        assertThat(deep.get(4)).isEqualTo("M leaf+9(unwind_o2.c:9) compare+22(unwind_o2.c:42) msort_with_tmp.part.0 msort_with_tmp qsort_r"
                + " main+94(unwind_o2.c:54)");
        assertThat(deep.get(2)).endsWith("worker+9(unwind_o2.c:36) start_thread clone3");
    }
}
