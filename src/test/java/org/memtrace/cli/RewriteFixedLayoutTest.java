package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * {@code memtrace run --mode rewrite} with the address space not randomized ({@code setarch -R}, as gdb runs a
 * program): libraries then sit just below the stack, and the trampolines of libc and ld.so must go below them,
 * never into the room the kernel keeps for the stack to grow (rw_apply.c, rw_ceiling). Before, no place was
 * found within 2 GB of either and both ran untraced. The accesses of libc's functions, counted by instruction
 * (function+offset as the trace names it), are those of a randomized run, the program's own loops are exact,
 * and the whole trace has as many accesses. Neither trace lists the stub pages among the program's mappings.
 * And memtrace run inside setarch is not setarch inside memtrace run: a program that executes another traces
 * only itself, and says so even under -q (a trace of setarch's few thousand accesses looked like a lost run).
 */
class RewriteFixedLayoutTest {
    @TempDir Path dir;

    @Test
    void aLayoutWithoutRandomizationIsTracedAsARandomizedOne() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_fixed_layout.c", "fixed", "-O1", "-g");
        Counts fixed = accesses(prog, true), randomized = accesses(prog, false);
        assertThat(fixed.libc()).as("the accesses of libc's memset, strlen, malloc and free by instruction").isEqualTo(randomized.libc());
        assertThat(fixed.libc().keySet()).anyMatch(k -> k.contains("memset")).anyMatch(k -> k.contains("strlen"))
                .anyMatch(k -> k.contains(" malloc+")).anyMatch(k -> k.contains(" free+"));
        // main's loops: a store to each of the 1,000 cells, then a load of each
        assertThat(fixed.cells()).isEqualTo(Map.of("L", 1000, "S", 1000)).isEqualTo(randomized.cells());
        assertThat(fixed.all()).as("accesses in the whole trace").isEqualTo(randomized.all()).isGreaterThan(2000);
    }

    @Test
    void aProgramExecutedBySetarchIsSaidToRunUntracedEvenWhenQuiet() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_fixed_layout.c", "fixed", "-O1", "-g");
        Path trace = dir.resolve("setarch.trace");
        var r = Cli.run(dir, "run", "-q", "-o", trace.toString(), "--", "setarch", "-R", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stderr()).isEqualTo("memtrace: the program executed " + prog + ", which ran untraced; it exited with status 0\n");
        assertThat(TraceFile.read(trace).lines()).as("setarch's own accesses only").noneMatch(l -> l.access() && l.field(0).startsWith("cells"));
    }

    /** A run's accesses: libc's string functions, malloc and free by kind and instruction; main's to cells by kind; all. */
    private record Counts(Map<String, Integer> libc, Map<String, Integer> cells, long all) {}

    private Counts accesses(Path prog, boolean fixedLayout) throws Exception {
        Path trace = dir.resolve(fixedLayout ? "fixed.trace" : "random.trace");
        String[] args = {"run", "--mode", "rewrite", "-o", trace.toString(), "--", prog.toString()};
        var r = fixedLayout ? Cli.runWithoutAslr(dir, args) : Cli.run(dir, args);
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stderr()).as("no module left unrewritten at run time").doesNotContain("unrewritten")
                .contains("memory instructions of /lib/x86_64-linux-gnu/libc.so.6 rewritten");
        TraceFile read = TraceFile.read(trace);
        // the punned jumps' stub pages are the runtime's, not the program's memory (rt_init.c, report_mapping)
        assertThat(read.comments()).as("mappings").noneMatch(c -> c.startsWith("mapping ") && c.contains("memtrace-stubs"));
        Map<String, Integer> libc = new TreeMap<>(), cells = new TreeMap<>();
        long all = 0;
        for (var l : read.lines()) {
            if (!l.access()) continue;
            all++;
            String ip = l.field(2);
            if (ip.contains("memset") || ip.contains("strlen") || ip.startsWith("malloc+") || ip.startsWith("free+"))
                libc.merge(l.type() + " " + ip, 1, Integer::sum);
            if (l.field(0).startsWith("cells[") && ip.startsWith("main+")) cells.merge(String.valueOf(l.type()), 1, Integer::sum);
        }
        return new Counts(libc, cells, all);
    }
}
