package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * A program's own signal handler, with traced accesses, interrupting a {@code memtrace cc} build anywhere
 * (sig_stress.c: a 20 µs timer over small functions, a loop that keeps its cursor in a register, malloc and
 * free) with buffers small enough to fill and be reused thousands of times: the trace holds every access
 * and event exactly once. A handler entered while the malloc wrapper wrote its event past the cursor
 * (rt_emit_seq, between its read of the cursor and its claim) recorded at the same place, and the wrapper's
 * remaining writes then overwrote the handler's first records; its failed claim wrote the event again (two
 * allocation events for one malloc, or "a tag's record ends inside a slot", "unknown tag type": 5 runs of 6
 * broke). Such a signal now waits for the claim (rt_signal.c, defer).
 */
class CcSignalStressTest {
    @TempDir static Path dir;
    static Path prog;

    @BeforeAll
    static void build() throws Exception {
        Path source = dir.resolve("sig_stress.c");
        try (InputStream in = CcSignalStressTest.class.getResourceAsStream("/c/sig_stress.c")) {
            Files.copy(in, source);
        }
        prog = dir.resolve("stress");
        List<String> cc = new ArrayList<>(Cli.command("cc"));
        cc.addAll(List.of("-O2", "-g", "-no-pie", "-o", prog.toString(), source.toString()));
        Gcc.run(cc);
    }

    @Test
    void everyAccessAndEventOnceWhateverTheHandlerInterrupts() throws Exception {
        int run = 0;
        for (int kb : new int[] {16, 64, 16}) {
            String name = "run" + run++;
            Path mtr = dir.resolve(name + ".mtr"), text = dir.resolve(name + ".trace");
            ProcessBuilder pb = new ProcessBuilder(prog.toString(), "100000");
            pb.environment().putAll(Map.of("MEMTRACE_OUT", mtr.toString(), "MEMTRACE_BUFFER_KB", "" + kb));
            Process p = pb.start();
            String out = new String(p.getInputStream().readAllBytes()).strip();
            assertThat(p.waitFor()).isZero();
            String[] f = out.split(" ");
            long calls = Long.parseLong(f[0]), loops = Long.parseLong(f[1]), ticks = Long.parseLong(f[2]),
                    mallocs = Long.parseLong(f[3]);
            assertThat(ticks).as("the timer fired").isPositive();
            Cli.Result printed = Cli.run(dir, "print", "-q", "-o", text.toString(), mtr.toString());
            assertThat(printed.status()).as(printed.stderr()).isZero();
            assertThat(printed.stderr()).as("%d KB buffers", kb).isEmpty();
            long cells = 0, aBytes = 0, marks = 0, allocations = 0, frees = 0;
            try (BufferedReader r = Files.newBufferedReader(text)) {
                for (String l; (l = r.readLine()) != null;) {
                    char kind = l.isEmpty() ? '#' : l.charAt(0);
                    if (kind == 'M' && l.contains("@main+")) allocations++;
                    if (kind == 'F' && l.contains("@main+")) frees++;
                    if (kind != 'L' && kind != 'S') continue;
                    String[] fields = l.split(",");
                    String var = fields[0].substring(fields[0].indexOf(':') + 1);
                    if (var.startsWith("cells[")) cells++;
                    else if (var.startsWith("a[")) aBytes += Long.parseLong(fields[3]);
                    else if (var.equals("marks+0") && kind == 'S') marks++;
                }
            }
            Files.delete(text);
            String at = kb + " KB buffers, " + ticks + " signals";
            assertThat(cells).as("cells[]: two loads and a store a call, " + at).isEqualTo(3 * calls);
            assertThat(aBytes).as("a[] read and written whole each loop, " + at).isEqualTo(2 * 8 * 256 * loops);
            assertThat(marks).as("the handler's store, once a run, " + at).isEqualTo(ticks);
            assertThat(allocations).as("one allocation event a malloc, " + at).isEqualTo(mallocs);
            assertThat(frees).as("one free event a free, " + at).isEqualTo(mallocs);
        }
    }
}
