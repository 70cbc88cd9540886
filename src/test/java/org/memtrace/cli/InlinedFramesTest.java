package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * Inlined calls in allocation stacks (docs/stacks.md, "Inlined calls"): a {@code -O2} program whose
 * {@code malloc} sits in {@code make}, inlined into {@code push_two}, inlined into {@code main}, which keeps
 * no frame pointer. The stack of each allocation is the chain {@code addr2line -i -f} gives for its return
 * address, with the lines of the calls, in fault mode and built with {@code memtrace cc}; at depth 1 the
 * trace is as before. Its stores into the new node lie in {@code make}'s inlined code too: their access lines
 * show the same chain (docs/trace-format.md, "Source lines").
 */
class InlinedFramesTest {
    @TempDir static Path dir;

    @BeforeAll
    static void build() throws Exception {
        Gcc.compile(dir, "inline_alloc.c", "inline_alloc", "-O2", "-g");
        Cli.Result cc = Cli.run(dir, "cc", "-O2", "-g", "-o", dir.resolve("inline_alloc-cc").toString(), dir.resolve("inline_alloc.c").toString());
        assertThat(cc.status()).as(cc.stderr()).isZero();
    }

    /** The trace's stack lines and main's M lines (libc's stdout buffer's left out), the test's directory cut from file names. */
    private static List<String> stacksAndBlocks(String program, String... options) throws Exception {
        Path trace = dir.resolve(program + options.length + ".trace");
        List<String> args = new ArrayList<>(List.of("run", "--mode", "fault", "-q", "-o", trace.toString()));
        args.addAll(List.of(options));
        args.addAll(List.of("--", dir.resolve(program).toString()));
        Cli.Result r = Cli.run(dir, args.toArray(String[]::new));
        assertThat(r.status()).as(r.stderr()).isZero();
        List<String> lines = new ArrayList<>();
        for (String line : Files.readAllLines(trace)) {
            line = line.replace(dir + "/", "");
            // main's stacks; libc's stdout buffer, allocated under printf, has its own (through libc, by .eh_frame)
            if (line.startsWith("# stack ") && line.split(" ")[3].contains("(inline_alloc.c:")) lines.add(line);
            else if (line.startsWith("M$") && line.contains("@main+")) lines.add(line.replaceAll(",16,\\d+", ",16,TID"));
        }
        return lines;
    }

    private static final Pattern MAIN = Pattern.compile("main\\+(\\d+)");

    @Test
    void eachAllocationShowsTheChainOfInlinedCallsWithTheirLines() throws Exception {
        for (String program : List.of("inline_alloc", "inline_alloc-cc")) {
            List<String> lines = stacksAndBlocks(program, "--stack-depth", "12");
            Matcher first = MAIN.matcher(lines.get(0)), second = MAIN.matcher(lines.get(2));
            assertThat(first.find() && second.find()).as(program + ": " + lines).isTrue();
            String a = first.group(1), b = second.group(1);
            // memtrace cc's runtime numbers five events of its own before main
            int n = program.equals("inline_alloc") ? 1 : 6;
            assertThat(lines).as(program).containsExactly(
                    "# stack 1 make(inline_alloc.c:8) push_two(inline_alloc.c:16) main+" + a + "(inline_alloc.c:22)",
                    "M$" + (n + 0) + ":<malloc0001@main+" + a + ">,16,TID,s1",
                    "# stack 2 make(inline_alloc.c:8) push_two(inline_alloc.c:17) main+" + b + "(inline_alloc.c:22)",
                    "M$" + (n + 4) + ":<malloc0002@main+" + b + ">,16,TID,s2",
                    "M$" + (n + 8) + ":<malloc0003@main+" + a + ">,16,TID,s1",
                    "M$" + (n + 12) + ":<malloc0004@main+" + b + ">,16,TID,s2",
                    "M$" + (n + 16) + ":<malloc0005@main+" + a + ">,16,TID,s1",
                    "M$" + (n + 20) + ":<malloc0006@main+" + b + ">,16,TID,s2");
            if (program.equals("inline_alloc")) {
                // addr2line -i -f on the call instructions gives the same functions and lines, innermost first
                long main = RunIntegrationTest.symbolIn(dir.resolve(program), "main");
                for (String offset : List.of(a, b)) {
                    String out = Gcc.run(List.of("addr2line", "-i", "-f", "-e", dir.resolve(program).toString(),
                            Long.toHexString(main + Long.parseLong(offset) - 1))).replace(dir + "/", "");
                    assertThat(out).isEqualTo("make\ninline_alloc.c:8\npush_two\ninline_alloc.c:" + (offset.equals(a) ? 16 : 17)
                            + "\nmain\ninline_alloc.c:22\n");
                }
            }
        }
    }

    @Test
    void atDepthOneTheTraceIsAsBefore() throws Exception {
        List<String> lines = stacksAndBlocks("inline_alloc", "--stack-depth", "1");
        assertThat(lines).hasSize(6).noneMatch(l -> l.startsWith("# stack") || l.contains(",s"));
    }

    @Test
    void theSummaryListsTheProgramPointsWithTheirInlinedFrames() throws Exception {
        Cli.Result r = Cli.run(dir, "run", "--mode", "fault", "--stack-depth", "12", "-o", dir.resolve("summary.trace").toString(), "--",
                dir.resolve("inline_alloc").toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        String summary = r.stderr().replace(dir + "/", "");
        assertThat(summary).containsPattern("at make\\(inline_alloc.c:8\\)\n +at push_two\\(inline_alloc.c:16\\)\n +at main\\+\\d+\\(inline_alloc.c:22\\)");
    }

    /** An access by main's code to a node: offset in the block, kind, size, instruction's offset in main, source field. */
    private static final Pattern NODE_ACCESS = Pattern.compile(
            "([LS])\\$\\d+:<malloc000\\d@main\\+\\d+>\\+(\\d+),\\[heap\\],main\\+(\\d+),(\\d+),\\d+,(.*)");

    @Test
    void accessesInInlinedCodeShowTheChainOfInlinedCalls() throws Exception {
        for (String program : List.of("inline_alloc", "inline_alloc-cc")) {
            Path trace = dir.resolve(program + "-access.trace");
            Cli.Result r = Cli.run(dir, "run", "--mode", "fault", "-q", "-o", trace.toString(), "--", dir.resolve(program).toString());
            assertThat(r.status()).as(r.stderr()).isZero();
            java.util.Set<String> sites = new java.util.TreeSet<>();
            java.util.Map<String, String> byOffset = new java.util.TreeMap<>();
            for (String line : Files.readAllLines(trace)) {
                assertThat(org.memtrace.testutil.MadtGrammar.check(line)).as(line).isNull();
                Matcher m = NODE_ACCESS.matcher(line.replace(dir + "/", ""));
                if (!m.matches()) continue;
                String source = m.group(5);
                // the last frame is the instruction itself, as the instruction field names it
                if (source.contains(";")) assertThat(source).as(line).endsWith(";main+" + m.group(3) + "(inline_alloc.c:22)");
                sites.add(m.group(1) + " +" + m.group(2) + " " + m.group(4) + " " + source.replace("main+" + m.group(3) + "(", "main+X("));
                byOffset.put(m.group(3), source);
            }
            // make's two stores (n->value, line 10; n->next, line 11) at push_two's two calls of it (lines 16, 17),
            // and main's own loads of the list (lines 25, 26), which have no inlined call
            assertThat(sites).as(program).containsExactlyInAnyOrder(
                    "L +0 8 inline_alloc.c:25",
                    "L +8 8 inline_alloc.c:26",
                    "S +0 8 make(inline_alloc.c:11);push_two(inline_alloc.c:16);main+X(inline_alloc.c:22)",
                    "S +0 8 make(inline_alloc.c:11);push_two(inline_alloc.c:17);main+X(inline_alloc.c:22)",
                    "S +8 8 make(inline_alloc.c:10);push_two(inline_alloc.c:16);main+X(inline_alloc.c:22)",
                    "S +8 8 make(inline_alloc.c:10);push_two(inline_alloc.c:17);main+X(inline_alloc.c:22)");
            if (!program.equals("inline_alloc")) continue;
            // addr2line -i -f at each instruction lists the same functions and lines, innermost first
            long main = RunIntegrationTest.symbolIn(dir.resolve(program), "main");
            for (var e : byOffset.entrySet()) {
                String out = Gcc.run(List.of("addr2line", "-i", "-f", "-e", dir.resolve(program).toString(),
                        Long.toHexString(main + Long.parseLong(e.getKey())))).replace(dir + "/", "");
                List<String> a2l = out.lines().toList();
                StringBuilder chain = new StringBuilder();
                for (int i = 0; i < a2l.size(); i += 2) {
                    String function = a2l.get(i).equals("main") ? "main+" + e.getKey() : a2l.get(i);
                    chain.append(i == 0 ? "" : ";").append(function).append('(').append(a2l.get(i + 1)).append(')');
                }
                String expected = a2l.size() == 2 ? a2l.get(1) : chain.toString();
                assertThat(e.getValue()).as("main+" + e.getKey()).isEqualTo(expected);
            }
        }
    }
}
