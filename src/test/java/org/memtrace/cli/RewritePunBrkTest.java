package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Gcc;

/**
 * Punned jumps whose stub page lies just above the program break (docs/rewriting.md, "Punned jumps"):
 * rewrite_pun_brk.s, a non-PIE executable, moves the break to 48 MB below the page of at_taken's and
 * at_taken2's stubs from an IFUNC resolver, before the runtime applies the plan. The runtime keeps only the
 * 32 MB above the break free of stubs, so it maps that page and writes the four puns: the 990 more
 * iterations take no trap of theirs (2 × 990 more when the page was refused, as with a 256 MB reserve), the
 * four record exactly their accesses, and the heap still works past the stub page: the program's 96 MB of
 * 32 KB blocks, which meet the stub page after 48 MB of brk and go on in memory malloc maps, all check out,
 * and it exits as natively. Both runs are made without address-space randomization, so that libc's traps in
 * the 3,072 mallocs, which depend on the layout, are the same in both and the difference is the fixture's.
 */
class RewritePunBrkTest {
    @TempDir Path dir;

    @Test
    void aStubPageJustAboveTheBreakIsMappedAndTheHeapGoesOnPastIt() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_pun_brk.s", "brk", "-no-pie");
        Map<String, Long> at = PunRun.symbols(prog);
        long[] traps = new long[2];
        int k = 0;
        for (int n : new int[] {10, 1000}) {
            List<String> command = new ArrayList<>(List.of(prog.toString()));
            if (n == 1000) command.add("many");
            Process nativeRun = new ProcessBuilder(command).inheritIO().start();
            assertThat(nativeRun.waitFor()).as("native").isEqualTo(n == 10 ? 30 : 184);
            // as natively (96: a block lost, 97/98: no break moved)
            PunRun r = PunRun.of(dir, prog, dir.resolve("t" + n + ".trace"), command, n == 10 ? 30 : 184, true);
            // the counts as rewrite-20 plans them (its tails and padding take some of what was punned before)
            assertThat(r.stderr()).contains("rewrite: 17 memory instructions of " + prog + " rewritten, 18 by a punned jump, 13 through the int3 fallback, 0 left untraced\n");
            traps[k++] = r.traps();
            r.assertChainedExact(at, n);
        }
        // the pushes' puns written: none of the 990 more iterations traps in them. Both runs see one layout
        // (not randomized): libc's int3 places depend on where its stub pages could go, and one that malloc
        // passes costs a trap per block, 3,072 in one run and none in the other when the layouts differ.
        assertThat(traps[1] - traps[0]).as("traps of the 990 more iterations").isLessThan(990);
    }
}
