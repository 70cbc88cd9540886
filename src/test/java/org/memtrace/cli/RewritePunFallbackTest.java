package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * Punned jumps the runtime cannot write (docs/rewriting.md, "Punned jumps"): rewrite_pun_fallback.s maps the
 * page of at_taken's and at_taken2's stubs itself, from its preinit_array, before the runtime applies the
 * plan. Both keep their int3 ("no stub page"), and so do at_chained and at_chained2, whose rel32s were planned
 * to read those puns' e9 and read their int3 ("bytes not as planned"). The four still record exactly their
 * accesses 10 and 1000 times, the pushes through a trap each time whose trampoline runs the pop after it as
 * its tail: the 990 more iterations take 2 × 990 traps more, and the summary counts the four among the puns
 * kept, by reason.
 */
class RewritePunFallbackTest {
    @TempDir Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"-no-pie", "-pie"})
    void punsWithATakenStubPageOrChangedBytesKeepTheirInt3AndStayExact(String layout) throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_pun_fallback.s", "fallback", layout);
        Map<String, Long> at = new HashMap<>();
        for (ElfSymbol s : ElfFile.read(prog).symtab()) at.put(s.name(), s.value());
        long[] traps = new long[2];
        int k = 0;
        for (int n : new int[] {10, 1000}) {
            Path trace = dir.resolve("t" + n + ".trace");
            List<String> args = new ArrayList<>(List.of("run", "--mode", "rewrite", "--addresses", "raw", "-o", trace.toString(), "--", prog.toString()));
            if (n == 1000) args.add("many");
            var r = Cli.run(dir, args.toArray(String[]::new));
            assertThat(r.status()).as(r.stderr()).isEqualTo(n == 10 ? 30 : 184); // as natively (99: the page was taken already)
            // the executable's line as planned: its four at_* puns (PunsTest) and start-up code's (as RewritePunTest's)
            assertThat(r.stderr()).contains("rewrite: " + (layout.equals("-pie") ? "17" : "9") + " memory instructions of " + prog + " rewritten, "
                    + (layout.equals("-pie") ? "16 by a punned jump, 3" : "11 by a punned jump, 9") + " through the int3 fallback, 0 left untraced\n");
            long planned = 0;
            for (Matcher p = Pattern.compile("rewritten, (\\d+) by a punned jump, ").matcher(r.stderr()); p.find(); )
                planned += Long.parseLong(p.group(1));
            Matcher puns = Pattern.compile("rewrite: punned jumps at run time: (\\d+) written, (\\d+) kept their int3 \\("
                    + "(\\d+) bytes not as planned, (\\d+) no stub page\\)\n").matcher(r.stderr());
            assertThat(puns.find()).as(r.stderr()).isTrue();
            long written = Long.parseLong(puns.group(1)), kept = Long.parseLong(puns.group(2));
            long bytes = Long.parseLong(puns.group(3)), noPage = Long.parseLong(puns.group(4));
            assertThat(written + kept).as("every planned pun, written or kept").isEqualTo(planned);
            assertThat(kept).as("the reasons add up").isEqualTo(bytes + noPage);
            // the executable's four among them (libc's and ld.so's, whose outcome depends on where the kernel put
            // them, add theirs)
            assertThat(bytes).as("at_chained, at_chained2").isGreaterThanOrEqualTo(2);
            assertThat(noPage).as("at_taken, at_taken2").isGreaterThanOrEqualTo(2);
            Matcher m = Pattern.compile("int3 fallback: [\\d,]+ accesses recorded in ([\\d,]+) traps").matcher(r.stderr());
            assertThat(m.find()).as(r.stderr()).isTrue();
            traps[k++] = Long.parseLong(m.group(1).replace(",", ""));

            long bias = TraceFile.read(trace).comments().stream().filter(c -> c.startsWith("module " + prog + " "))
                    .map(c -> Long.parseUnsignedLong(c.replaceAll(".* bias=0x([0-9a-f]+) .*", "$1"), 16)).findFirst().orElseThrow();
            Map<Long, List<String>> byIp = new HashMap<>();
            for (var l : TraceFile.read(trace).lines())
                if (l.access()) byIp.computeIfAbsent(l.number(2) - bias, x -> new ArrayList<>()).add(l.type() + l.field(0));
            String slot = byIp.get(at.get("at_chained")).getFirst().substring(1);
            assertThat(slot).startsWith("0x7ff");
            for (String push : List.of("at_chained", "at_chained2"))
                assertThat(byIp.get(at.get(push))).as(push).containsExactlyElementsOf(Collections.nCopies(n, "S" + slot));
            for (String pop : List.of("at_taken", "at_taken2"))
                assertThat(byIp.get(at.get(pop))).as(pop).containsExactlyElementsOf(Collections.nCopies(n, "L" + slot));
            String cell8 = "0x" + Long.toHexString(at.get("cell") + 8 + bias);
            List<String> modify = new ArrayList<>();
            for (int i = 0; i < n; i++) modify.addAll(List.of("L" + cell8, "S" + cell8));
            assertThat(byIp.get(at.get("at_taken") + 7)).as("addq $3 after at_taken's nopw").containsExactlyElementsOf(modify);
        }
        // at_chained's int3 runs at_taken in its trampoline's tail (docs/rewriting.md, "Trampoline tails"): at_taken
        // is reached by falling through and so its int3 is never hit, nor at_taken2's
        assertThat(traps[1] - traps[0]).as("traps of the 990 more iterations: at_chained's and at_chained2's").isEqualTo(2 * 990);
    }
}
