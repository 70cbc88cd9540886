package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * Access stacks (docs/stacks.md, "Access stacks"): a load from a freed block in a helper two calls below main
 * ({@code main -> inspect -> peek}, uaf_stack.c), built {@code -O0 -g} (frame pointers) and {@code -O2
 * -fomit-frame-pointer -g} (the frames found by .eh_frame alone; the load is peek's first instruction). Fault
 * mode's summary and report show the accessing code's whole stack with its lines, cut at {@code --stack-depth},
 * none at depth 1; {@code run --check} prints the same frames under its report; rewrite mode's the same frames,
 * from the load trampoline's first entries, with {@code --access-stacks} (none without: the note says so); a {@code memtrace cc} build's the same frames from its probe's
 * first executions (agent/runtime/rt_ccarm.c), in a {@code memtrace run} and in a {@code .mtr} the program
 * wrote alone, and none for an execution after the first 4 (uaf_late.c).
 */
class AccessStackTest {
    @TempDir static Path dir;

    @BeforeAll
    static void build() throws Exception {
        Gcc.compile(dir, "uaf_stack.c", "uaf0", "-O0", "-g");
        Gcc.compile(dir, "uaf_stack.c", "uaf2", "-O2", "-fomit-frame-pointer", "-g", "-Wno-use-after-free");
        try (var in = AccessStackTest.class.getResourceAsStream("/c/uaf_late.c")) {
            Files.copy(in, dir.resolve("uaf_late.c"));
        }
        cc("uaf_stack.c", "uaf0-cc", "-O0", "-g");
        cc("uaf_stack.c", "uaf2-cc", "-O2", "-fomit-frame-pointer", "-g", "-Wno-use-after-free");
        cc("uaf_late.c", "late2-cc", "-O2", "-fomit-frame-pointer", "-g", "-Wno-use-after-free");
        try (var in = AccessStackTest.class.getResourceAsStream("/c/uaf_loop.c")) {
            Files.copy(in, dir.resolve("uaf_loop.c"));
        }
        cc("uaf_loop.c", "loop2-cc", "-O2", "-fno-tree-vectorize", "-no-pie", "-fomit-frame-pointer", "-g", "-Wno-use-after-free");
    }

    private static void cc(String source, String out, String... flags) throws Exception {
        List<String> args = new java.util.ArrayList<>(List.of("cc"));
        args.addAll(List.of(flags));
        args.addAll(List.of("-o", path(out), path(source)));
        run(args.toArray(String[]::new));
    }

    private static String path(String name) {
        return dir.resolve(name).toString();
    }

    /** Source files are named as compiled: gcc was given their absolute paths in the test's directory. */
    private static String rel(String text) {
        return text.replace(dir + "/", "");
    }

    private static Cli.Result run(String... args) throws Exception {
        Cli.Result r = Cli.run(dir, args);
        assertThat(r.status()).as(r.stderr()).isZero();
        return r;
    }

    /** The summary's use-after-free line and the lines under it, up to the program points. */
    private static List<String> useAfterFree(String program, String... options) throws Exception {
        return useAfterFreeIn("fault", program, options);
    }

    private static List<String> useAfterFreeIn(String mode, String program, String... options) throws Exception {
        List<String> args = new java.util.ArrayList<>(List.of("run", "--mode", mode, "-o", "/dev/null"));
        args.addAll(List.of(options));
        args.addAll(List.of("--", path(program)));
        String err = rel(run(args.toArray(String[]::new)).stderr());
        return err.lines().dropWhile(l -> !l.startsWith("    use after free")).takeWhile(l -> !l.startsWith("    program points"))
                .map(l -> l.replaceAll("\\s+", " ")).toList();
    }

    @Test
    void summaryShowsTheAccessingStackWithLines() throws Exception {
        assertThat(useAfterFree("uaf0")).containsExactly(
                " use after free 1 access to freed memory, the first at event 5: <freed:0001@main+18>+4 by peek+16",
                " at peek+16(uaf_stack.c:7)", " at inspect+24(uaf_stack.c:11)", " at main+60(uaf_stack.c:18)");
        assertThat(useAfterFree("uaf2")).containsExactly(
                " use after free 1 access to freed memory, the first at event 4: <freed:0001@main+11>+4 by peek+0",
                " at peek+0(uaf_stack.c:7)", " at inspect+5(uaf_stack.c:11)", " at main+32(uaf_stack.c:18)");
    }

    /** --access-stacks arms nothing in fault mode, which records every access's stack: said in one line, the frames as without it. */
    @Test
    void faultModeSaysAccessStacksChangeNothing() throws Exception {
        Cli.Result r = run("run", "--mode", "fault", "--access-stacks", "-o", "/dev/null", "--", path("uaf2"));
        assertThat(r.stderr().lines().filter(l -> l.contains("--access-stacks"))).containsExactly(
                "memtrace: --access-stacks has no effect in fault mode: it records every access's stack already (to --stack-depth)");
        assertThat(useAfterFree("uaf2", "--access-stacks")).isEqualTo(useAfterFree("uaf2"));
        Cli.Result rewritten = run("run", "--mode", "rewrite", "--access-stacks", "-o", "/dev/null", "--", path("uaf2"));
        assertThat(rewritten.stderr()).doesNotContain("has no effect");
    }

    @Test
    void depthCutsTheAccessStackAndOneRecordsNone() throws Exception {
        assertThat(useAfterFree("uaf2", "--stack-depth", "2")).containsExactly(
                " use after free 1 access to freed memory, the first at event 4: <freed:0001@main+11>+4 by peek+0",
                " at peek+0(uaf_stack.c:7)", " at inspect+5(uaf_stack.c:11)");
        List<String> one = useAfterFree("uaf2", "--stack-depth", "1");
        assertThat(one.getFirst()).endsWith("by peek+0");
        assertThat(one).noneMatch(l -> l.startsWith(" at "));
    }

    /**
     * Rewrite mode: the load is a trampoline's, entered by the emulated call in inspect's trampoline (a branch
     * straight to a trampoline); its first entry traps and sends the same frames fault mode finds. The event
     * number counts libc's start-up accesses, which fault mode does not trace: left out of the comparison.
     */
    @Test
    void rewriteModeShowsTheAccessingStackOfAPlacesFirstExecutions() throws Exception {
        assertThat(eventless(useAfterFreeIn("rewrite", "uaf0", "--access-stacks"))).containsExactly(
                " use after free 1 access to freed memory, the first at event N: <freed:0001@main+18>+4 by peek+16",
                " at peek+16(uaf_stack.c:7)", " at inspect+24(uaf_stack.c:11)", " at main+60(uaf_stack.c:18)");
        assertThat(eventless(useAfterFreeIn("rewrite", "uaf2", "--access-stacks"))).containsExactly(
                " use after free 1 access to freed memory, the first at event N: <freed:0001@main+11>+4 by peek+0",
                " at peek+0(uaf_stack.c:7)", " at inspect+5(uaf_stack.c:11)", " at main+32(uaf_stack.c:18)");
    }

    /** At depth 1 no trampoline is armed: the instruction alone, and where its callers can be had. */
    @Test
    void rewriteModeAtDepthOneRecordsNoAccessStack() throws Exception {
        // at depth 1 no "program points" line ends the section: the two lines of the use after free
        assertThat(eventless(useAfterFreeIn("rewrite", "uaf2", "--access-stacks", "--stack-depth", "1")).subList(0, 2)).containsExactly(
                " use after free 1 access to freed memory, the first at event N: <freed:0001@main+11>+4 by peek+0",
                " at peek+0(uaf_stack.c:7) (its callers: recorded for an instruction's first 4 executions only;"
                        + " --mode fault records every access's)");
    }

    /** Without --access-stacks no trampoline is armed at the default depth either (their cost: docs/stacks.md). */
    @Test
    void rewriteModeRecordsNoAccessStackWithoutTheOption() throws Exception {
        assertThat(eventless(useAfterFreeIn("rewrite", "uaf2"))).containsExactly(
                " use after free 1 access to freed memory, the first at event N: <freed:0001@main+11>+4 by peek+0",
                " at peek+0(uaf_stack.c:7) (its callers: not recorded: --access-stacks records an instruction's first 4"
                        + " executions'; --mode fault every access's)");
    }

    /**
     * A {@code memtrace cc} build: the probe before peek's load is armed at start, its first execution traps and
     * sends the frames fault mode finds (the instruction is the probe's, so its offset is the cc build's).
     */
    @Test
    void ccBuildShowsTheAccessingStackOfAProbesFirstExecutions() throws Exception {
        assertThat(useAfterFreeOf("uaf0-cc", "--access-stacks")).containsExactly(
                " use after free 1 access to freed memory, the first at event 18: <freed:0001@main+146>+4 by peek+239",
                " at peek+239(uaf_stack.c:7)", " at inspect+186(uaf_stack.c:11)", " at main+434(uaf_stack.c:18)");
        assertThat(useAfterFreeOf("uaf2-cc", "--access-stacks")).containsExactly(
                " use after free 1 access to freed memory, the first at event 7: <freed:0001@main+139>+4 by peek+81",
                " at peek+81(uaf_stack.c:7)", " at inspect+71(uaf_stack.c:11)", " at main+292(uaf_stack.c:18)");
        assertThat(useAfterFreeOf("uaf2-cc", "--access-stacks", "--stack-depth", "2")).containsExactly(
                " use after free 1 access to freed memory, the first at event 7: <freed:0001@main+139>+4 by peek+81",
                " at peek+81(uaf_stack.c:7)", " at inspect+71(uaf_stack.c:11)");
    }

    /**
     * A trace the program wrote alone unarmed says so (its MT_HELLO's flags): print's note is "not recorded", as
     * run's, not the armed run's "first 4 executions only".
     */
    @Test
    void ccBuildRunAloneUnarmedSaysItsStacksWereNotRecorded() throws Exception {
        Path mtr = dir.resolve("uaf2-cc-unarmed.mtr");
        ProcessBuilder pb = new ProcessBuilder(path("uaf2-cc")).directory(dir.toFile()).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        pb.environment().put("MEMTRACE_OUT", mtr.toString());
        pb.environment().remove("MEMTRACE_ACCESS_STACKS");
        assertThat(pb.start().waitFor()).isZero();
        String err = rel(run("print", "-o", "/dev/null", mtr.toString()).stderr());
        assertThat(err.lines().dropWhile(l -> !l.startsWith("    use after free")).limit(2).map(l -> l.replaceAll("\\s+", " ")))
                .containsExactly(" use after free 1 access to freed memory, the first at event 7: <freed:0001@main+139>+4 by peek+81",
                        " at peek+81(uaf_stack.c:7) (its callers: not recorded: --access-stacks records an instruction's first 4"
                                + " executions'; a build without memtrace cc under memtrace run --mode fault every access's)");
    }

    /**
     * A loop that keeps its cursor in a register (uaf_loop.c): its probe's first execution, the first use after
     * free, sends sum's callers while the register still equals the cursor in memory; the record goes at the
     * cursor and the register after it (rw_arm.c), and all 64 reads follow.
     */
    @Test
    void ccBuildShowsTheStackOfALoopsFirstExecution() throws Exception {
        List<String> lines = useAfterFreeOf("loop2-cc", "--access-stacks");
        assertThat(lines.stream().filter(l -> l.startsWith(" at "))).hasSize(2);
        assertThat(lines.get(0)).matches(" use after free 64 accesses to freed memory, the first at event [0-9]+: <freed:0001@main\\+[0-9]+>\\+0 by sum\\+[0-9]+");
        assertThat(lines.get(1)).matches(" at sum\\+[0-9]+\\(uaf_loop.c:9\\)");
        assertThat(lines.get(2)).matches(" at main\\+[0-9]+\\(uaf_loop.c:17\\)");
    }

    /** The program run alone writes the same MT_CONTEXT into its .mtr; print reads it as run does. */
    @Test
    void ccBuildRunAloneWritesTheAccessStack() throws Exception {
        Path mtr = dir.resolve("uaf2-cc.mtr");
        ProcessBuilder pb = new ProcessBuilder(path("uaf2-cc")).directory(dir.toFile()).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        pb.environment().put("MEMTRACE_OUT", mtr.toString());
        pb.environment().put("MEMTRACE_ACCESS_STACKS", "1");
        assertThat(pb.start().waitFor()).isZero();
        String err = rel(run("print", "-o", "/dev/null", mtr.toString()).stderr());
        assertThat(err.lines().dropWhile(l -> !l.startsWith("    use after free")).limit(4).map(l -> l.replaceAll("\\s+", " ")))
                .containsExactly(" use after free 1 access to freed memory, the first at event 7: <freed:0001@main+139>+4 by peek+81",
                        " at peek+81(uaf_stack.c:7)", " at inspect+71(uaf_stack.c:11)", " at main+292(uaf_stack.c:18)");
    }

    /**
     * Only a probe's first 4 executions send a stack: peek's 7th (the use after free) has its instruction alone,
     * and the runs after the byte is written back record what a depth-1 run records. At depth 1 nothing is armed.
     */
    @Test
    void ccBuildGivesNoStackAfterTheFirstExecutionsNorAtDepthOne() throws Exception {
        String note = " (its callers: recorded for an instruction's first 4 executions only; a build without memtrace cc"
                + " under memtrace run --mode fault records every access's)";
        assertThat(useAfterFreeOf("late2-cc", "--access-stacks").subList(0, 2)).containsExactly(
                " use after free 1 access to freed memory, the first at event 42: <freed:0002@main+517>+4 by peek+81",
                " at peek+81(uaf_late.c:9)" + note);
        assertThat(useAfterFreeOf("uaf2-cc", "--access-stacks", "--stack-depth", "1").subList(0, 2)).containsExactly(
                " use after free 1 access to freed memory, the first at event 7: <freed:0001@main+139>+4 by peek+81",
                " at peek+81(uaf_stack.c:7)" + note);
        // without --access-stacks nothing is armed, and the note says how to get them
        assertThat(useAfterFreeOf("uaf2-cc").subList(0, 2)).containsExactly(
                " use after free 1 access to freed memory, the first at event 7: <freed:0001@main+139>+4 by peek+81",
                " at peek+81(uaf_stack.c:7) (its callers: not recorded: --access-stacks records an instruction's first 4"
                        + " executions'; a build without memtrace cc under memtrace run --mode fault every access's)");
        Path one = dir.resolve("late-1.trace"), twelve = dir.resolve("late-12.trace");
        run("run", "-q", "--stack-depth", "1", "-o", one.toString(), "--", path("late2-cc"));
        run("run", "-q", "--access-stacks", "--stack-depth", "12", "-o", twelve.toString(), "--", path("late2-cc"));
        assertThat(accesses(twelve)).isEqualTo(accesses(one)).hasSize(48);
    }

    /** A trace's access lines without what differs between two runs (the pid, the stack's place). */
    private static List<String> accesses(Path trace) throws Exception {
        return Files.readAllLines(trace).stream().filter(l -> l.startsWith("L") || l.startsWith("S"))
                .map(l -> l.replaceAll("\\[stack\\]\\+[0-9]+", "[stack]").replaceAll(",[0-9]+,([^,]*)$", ",$1")).toList();
    }

    /** The whole run's use-after-free lines: every run passes through the launcher, whatever the build. */
    private static List<String> useAfterFreeOf(String program, String... options) throws Exception {
        List<String> args = new java.util.ArrayList<>(List.of("run", "-o", "/dev/null"));
        args.addAll(List.of(options));
        args.addAll(List.of("--", path(program)));
        String err = rel(run(args.toArray(String[]::new)).stderr());
        return err.lines().dropWhile(l -> !l.startsWith("    use after free")).takeWhile(l -> !l.startsWith("    program points"))
                .map(l -> l.replaceAll("\\s+", " ")).toList();
    }

    private static List<String> eventless(List<String> lines) {
        return lines.stream().map(l -> l.replaceFirst("at event [0-9,]+:", "at event N:")).toList();
    }

    /** The report's use-after-free row carries the access stack next to the allocation and free stacks. */
    @Test
    void reportRowHasTheAccessStack() throws Exception {
        reportRowHasTheAccessStack("fault");
    }

    @Test
    void reportRowHasTheAccessStackInRewriteMode() throws Exception {
        reportRowHasTheAccessStack("rewrite", "--access-stacks");
    }

    @Test
    void reportRowHasTheAccessStackOfACcBuild() throws Exception {
        JsonNode row = freedAccess("cc", "uaf2-cc", "--access-stacks");
        assertThat(row.get("instruction").asText()).isEqualTo("peek+81");
        assertThat(row.get("accessStack")).extracting(JsonNode::asText)
                .containsExactly("peek+81(uaf_stack.c:7)", "inspect+71(uaf_stack.c:11)", "main+292(uaf_stack.c:18)");
    }

    private static void reportRowHasTheAccessStack(String mode, String... options) throws Exception {
        JsonNode row = freedAccess(mode, "uaf2", options);
        assertThat(row.get("instruction").asText()).isEqualTo("peek+0");
        assertThat(row.get("accessStack")).extracting(JsonNode::asText)
                .containsExactly("peek+0(uaf_stack.c:7)", "inspect+5(uaf_stack.c:11)", "main+32(uaf_stack.c:18)");
        assertThat(row.get("freeStack")).extracting(JsonNode::asText).containsExactly("main+22(uaf_stack.c:17)");
    }

    /** The report's first use-after-free row (its JSON), of a run in mode ("cc": the launcher's choice for a cc build). */
    private static JsonNode freedAccess(String mode, String program, String... options) throws Exception {
        Path page = dir.resolve(program + "-" + mode + ".html");
        List<String> args = new java.util.ArrayList<>(List.of("run"));
        if (!mode.equals("cc")) args.addAll(List.of("--mode", mode));
        args.addAll(List.of(options));
        args.addAll(List.of("-q", "-o", "/dev/null", "--report", page.toString(), "--", path(program)));
        run(args.toArray(String[]::new));
        String html = rel(Files.readString(page));
        int start = html.indexOf("const DATA = ") + "const DATA = ".length();
        return new ObjectMapper().readTree(html.substring(start, html.indexOf('\n', start)).replaceAll(";\\s*$", ""))
                .get("freedAccesses").get(0);
    }

    /** run --check unwinds the faulting instruction's callers by .eh_frame: code without frame pointers shows them all. */
    @Test
    void runCheckPrintsTheAccessFramesWithoutFramePointers() throws Exception {
        Cli.Result r = Cli.run(dir, "run", "--check", "--mode", "fault", "--", path("uaf2"));
        assertThat(r.status()).isNotZero();
        List<String> frames = rel(r.stderr()).lines().filter(l -> l.startsWith("    #")).limit(3).toList();
        // code no call-site table covers is named by its function (.symtab), as ASan names it
        assertThat(frames).containsExactly("    #0 uaf_stack.c:7 (peek+0) in peek", "    #1 uaf_stack.c:11 (inspect+5) in inspect",
                "    #2 uaf_stack.c:18 (main+32) in main");
    }
}
