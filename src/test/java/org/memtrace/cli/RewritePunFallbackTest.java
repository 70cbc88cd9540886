package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.testutil.Gcc;

/**
 * Punned jumps the runtime cannot write (docs/rewriting.md, "Punned jumps"): rewrite_pun_fallback.s maps the
 * page of at_taken's and at_taken2's stubs itself, from an IFUNC resolver, before the runtime applies the
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
        Map<String, Long> at = PunRun.symbols(prog);
        long[] traps = new long[2];
        int k = 0;
        for (int n : new int[] {10, 1000}) {
            List<String> command = new ArrayList<>(List.of(prog.toString()));
            if (n == 1000) command.add("many");
            // as natively (99: the page was taken already); the address space not randomized, so that libc's and
            // ld.so's puns (whose stub pages depend on where the kernel put them) trap alike in both runs
            PunRun r = PunRun.of(dir, prog, dir.resolve("t" + n + ".trace"), command, n == 10 ? 30 : 184, true);
            // the executable's line as planned: its four at_* puns (PunsTest) and start-up code's (as RewritePunTest's)
            // rewrite-20's padding and tails take some of what was punned (PunsTest has the plan itself)
            assertThat(r.stderr()).contains("rewrite: " + (layout.equals("-pie") ? "18" : "11") + " memory instructions of " + prog + " rewritten, "
                    + (layout.equals("-pie") ? "15 by a punned jump, 3" : "10 by a punned jump, 8") + " through the int3 fallback, 0 left untraced\n");
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
            traps[k++] = r.traps();
            r.assertChainedExact(at, n);
        }
        // at_chained's int3 runs at_taken in its trampoline's tail (docs/rewriting.md, "Trampoline tails"): at_taken
        // is reached by falling through and so its int3 is never hit, nor at_taken2's
        assertThat(traps[1] - traps[0]).as("traps of the 990 more iterations: at_chained's and at_chained2's").isEqualTo(2 * 990);
    }
}
