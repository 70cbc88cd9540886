package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.testutil.Gcc;

/**
 * Punned jumps at run time (docs/rewriting.md, "Punned jumps"): rewrite_pun.s's short instructions, each
 * reached by its own first byte, record exactly their accesses 10 and 1000 times and the program returns what
 * it returns natively; the ones whose pun was planned take no trap, so a run of 1000 iterations takes as many
 * traps as one of 10 (libc's within a few), but for a non-PIE executable's at_push, whose window lies below
 * address 0 and which keeps its int3: 990 traps more.
 */
class RewritePunTest {
    @TempDir Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"-no-pie", "-pie"})
    void punnedInstructionsRecordExactlyTheirAccessesWithoutATrap(String layout) throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_pun.s", "pun", layout);
        Map<String, Long> at = PunRun.symbols(prog);
        long[] traps = new long[2];
        int k = 0;
        for (int n : new int[] {10, 1000}) {
            List<String> command = new ArrayList<>(List.of(prog.toString()));
            if (n == 1000) command.add("many");
            // as natively: 3 added n times
            // one layout for both runs (setarch -R): where libc's stub pages can go, and so which of its places
            // keep an int3, depends on the layout
            PunRun r = PunRun.of(dir, prog, dir.resolve("t" + n + ".trace"), command, n == 10 ? 30 : 184, true);
            // the summary as it happened: the executable's puns as planned (PunsTest: at_push's window is below 0
            // without PIE), and the runtime's record of every module's puns, written or kept as int3s, adds up
            // rewrite-20's padding and tails take some of what was punned (PunsTest has the plan itself)
            assertThat(r.stderr()).contains("rewrite: " + (layout.equals("-pie") ? "18" : "11") + " memory instructions of " + prog + " rewritten, "
                    + (layout.equals("-pie") ? "16 by a punned jump, 3" : "11 by a punned jump, 8") + " through the int3 fallback, 0 left untraced\n");
            long planned = 0;
            for (Matcher p = Pattern.compile("rewritten, (\\d+) by a punned jump, ").matcher(r.stderr()); p.find(); )
                planned += Long.parseLong(p.group(1));
            Matcher puns = Pattern.compile("rewrite: punned jumps at run time: (\\d+) written, (\\d+) kept their int3(?: \\((?:(\\d+) bytes not as planned)?"
                    + "(?:, )?(?:(\\d+) no stub page)?\\))?\n").matcher(r.stderr());
            assertThat(puns.find()).as(r.stderr()).isTrue();
            long written = Long.parseLong(puns.group(1)), kept = Long.parseLong(puns.group(2));
            assertThat(written + kept).as("every planned pun, written or kept").isEqualTo(planned);
            assertThat(kept).as("the reasons add up").isEqualTo((puns.group(3) == null ? 0 : Long.parseLong(puns.group(3)))
                    + (puns.group(4) == null ? 0 : Long.parseLong(puns.group(4))));
            assertThat(written).as("the executable's puns among them").isGreaterThanOrEqualTo(layout.equals("-pie") ? 16 : 8);
            traps[k++] = r.traps();
            String cell = r.address(at.get("cell")), cell8 = r.address(at.get("cell") + 8);
            assertThat(r.at(at.get("at_two"))).containsExactlyElementsOf(Collections.nCopies(n, "L" + cell));
            assertThat(r.at(at.get("at_three"))).as("read and written").containsExactlyElementsOf(PunRun.modified(cell8, n));
            String slot = r.at(at.get("at_push")).getFirst().substring(1);
            assertThat(slot).startsWith("0x7ff");
            assertThat(r.at(at.get("at_push"))).containsExactlyElementsOf(Collections.nCopies(n, "S" + slot));
            assertThat(r.at(at.get("at_pop"))).containsExactlyElementsOf(Collections.nCopies(n, "L" + slot));
            assertThat(r.at(at.get("at_padded"))).containsExactlyElementsOf(Collections.nCopies(n, "L" + cell8));
            assertThat(r.at(at.get("at_long"))).as("its jump padded with a prefix, non-PIE")
                    .containsExactlyElementsOf(Collections.nCopies(n, "S" + r.address(at.get("cell") + 16)));
            assertThat(r.at(at.get("at_evict"))).containsExactlyElementsOf(Collections.nCopies(n, "L" + cell8));
            assertThat(r.at(at.get("at_evicted"))).containsExactlyElementsOf(Collections.nCopies(n, "S" + r.address(at.get("cell") + 20)));
        }
        // libc's own traps differ by a few between two runs even in one layout (988 and 991 seen against 990, as
        // RewriteSwitchTest and RewriteTailTest allow): the executable's share is 0 or 990, the rest within 5
        assertThat(traps[1] - traps[0]).as("traps of the 990 more iterations").isBetween(layout.equals("-pie") ? -5L : 985L, layout.equals("-pie") ? 5L : 995L);
    }
}
