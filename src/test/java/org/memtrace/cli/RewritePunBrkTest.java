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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * Punned jumps whose stub page lies just above the program break (docs/rewriting.md, "Punned jumps"):
 * rewrite_pun_brk.s, a non-PIE executable, moves the break to 48 MB below the page of at_taken's and
 * at_taken2's stubs from its preinit_array, before the runtime applies the plan. The runtime keeps only the
 * 32 MB above the break free of stubs, so it maps that page and writes the four puns: the 990 more
 * iterations take no trap of theirs (2 × 990 more when the page was refused, as with a 256 MB reserve), the
 * four record exactly their accesses, and the heap still works past the stub page: the program's 96 MB of
 * 32 KB blocks, which meet the stub page after 48 MB of brk and go on in memory malloc maps, all check out,
 * and it exits as natively.
 */
class RewritePunBrkTest {
    @TempDir Path dir;

    @Test
    void aStubPageJustAboveTheBreakIsMappedAndTheHeapGoesOnPastIt() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_pun_brk.s", "brk", "-no-pie");
        Map<String, Long> at = new HashMap<>();
        for (ElfSymbol s : ElfFile.read(prog).symtab()) at.put(s.name(), s.value());
        long[] traps = new long[2];
        int k = 0;
        for (int n : new int[] {10, 1000}) {
            List<String> command = new ArrayList<>(List.of(prog.toString()));
            if (n == 1000) command.add("many");
            Process nativeRun = new ProcessBuilder(command).inheritIO().start();
            assertThat(nativeRun.waitFor()).as("native").isEqualTo(n == 10 ? 30 : 184);
            Path trace = dir.resolve("t" + n + ".trace");
            List<String> args = new ArrayList<>(List.of("run", "--mode", "rewrite", "--addresses", "raw", "-o", trace.toString(), "--"));
            args.addAll(command);
            var r = Cli.run(dir, args.toArray(String[]::new));
            assertThat(r.status()).as(r.stderr()).isEqualTo(n == 10 ? 30 : 184); // as natively (96: a block lost, 97/98: no break moved)
            assertThat(r.stderr()).contains("rewrite: 15 memory instructions of " + prog + " rewritten, 19 by a punned jump, 14 through the int3 fallback, 0 left untraced\n");
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
        // the pushes' puns written: none of the 990 more iterations traps in them (libc's puns that a layout keeps
        // may add a few traps in malloc, the same in both runs or nearly)
        assertThat(traps[1] - traps[0]).as("traps of the 990 more iterations").isLessThan(990);
    }
}
