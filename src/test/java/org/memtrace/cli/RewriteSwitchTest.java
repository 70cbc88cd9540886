package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.symbols.ElfFile;
import org.memtrace.testutil.Gcc;

/**
 * Functions that jump indirectly move their short instructions around the places their jumps land, which
 * the planner reads from the data (docs/rewriting.md, "Indirect jumps"): rewrite_switch.s's two switches,
 * a position-independent one (offsets from the table) and one through absolute addresses (plain values
 * without PIE), record exactly their accesses 10 and 1000 times, case 1 of each as often when it is jumped
 * to as when case 0 falls into it, without a trap (a run of 1000 takes as many as one of 10).
 */
class RewriteSwitchTest {
    @TempDir Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"-no-pie", "-pie"})
    void casesNamedOnlyByATableRecordExactlyTheirAccessesWithoutATrap(String layout) throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_switch.s", "switch", layout);
        Map<String, Long> at = PunRun.symbols(prog);
        long[] rel = relativeCases(prog, at.get("rel_table"));
        long abs = at.get("abs_switch");
        long[] traps = new long[2];
        int k = 0;
        for (int n : new int[] {10, 1000}) {
            List<String> command = new ArrayList<>(List.of(prog.toString()));
            if (n == 1000) command.add("many");
            PunRun r = PunRun.of(dir, prog, dir.resolve("t" + n + ".trace"), command, n == 10 ? 40 : 160);
            traps[k++] = r.traps();
            assertThat(r.stderr()).contains("memory instructions of " + prog + " rewritten, ");
            assertThat(r.at(rel[0])).as("rel case 0").containsExactlyElementsOf(Collections.nCopies(n, "L" + r.address(at.get("cell"))));
            assertThat(r.at(rel[1])).as("rel case 1, jumped to and fallen into").containsExactlyElementsOf(PunRun.modified(r.address(at.get("cell") + 4), 2 * n));
            assertThat(r.at(rel[2])).as("rel case 2").containsExactlyElementsOf(PunRun.modified(r.address(at.get("cell") + 8), n));
            assertThat(r.at(abs + 15)).as("abs case 0").containsExactlyElementsOf(Collections.nCopies(n, "L" + r.address(at.get("cell") + 12)));
            assertThat(r.at(abs + 21)).as("abs case 1, jumped to and fallen into").containsExactlyElementsOf(PunRun.modified(r.address(at.get("cell") + 16), 2 * n));
            assertThat(r.at(abs + 26)).as("abs case 2").containsExactlyElementsOf(PunRun.modified(r.address(at.get("cell") + 20), n));
        }
        // within a few, not equal: a punned jump whose stub page falls on another mapping keeps its int3, and
        // where those lie changes with each run's layout (one run of 10 took 4 traps, its run of 1000 took 2);
        // a case that trapped would add 990
        assertThat(traps[1]).as("traps of the 990 more iterations").isBetween(traps[0] - 5, traps[0] + 5);
    }

    /** The link-time addresses of rel_table's three cases: each entry an offset from the table. */
    private static long[] relativeCases(Path prog, long table) throws Exception {
        ElfFile elf = ElfFile.read(prog);
        var rodata = elf.section(".rodata").orElseThrow();
        ByteBuffer b = ByteBuffer.wrap(elf.contents(rodata)).order(ByteOrder.LITTLE_ENDIAN);
        long[] out = new long[3];
        for (int i = 0; i < 3; i++) out[i] = table + b.getInt((int) (table - rodata.address()) + 4 * i);
        return out;
    }
}
