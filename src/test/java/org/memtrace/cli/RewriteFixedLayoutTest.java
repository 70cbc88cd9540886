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
 * (function+offset as the trace names it), are those of a randomized run. Neither trace lists the stub pages
 * among the program's mappings.
 */
class RewriteFixedLayoutTest {
    @TempDir Path dir;

    @Test
    void libcIsRewrittenWhenTheLayoutIsNotRandomized() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_fixed_layout.c", "fixed", "-O1", "-g");
        Map<String, Integer> fixed = libcAccesses(prog, true), randomized = libcAccesses(prog, false);
        assertThat(fixed).as("the accesses of libc's memset, strlen, malloc and free by instruction").isEqualTo(randomized);
        assertThat(fixed.keySet()).anyMatch(k -> k.contains("memset")).anyMatch(k -> k.contains("strlen"))
                .anyMatch(k -> k.contains(" malloc+")).anyMatch(k -> k.contains(" free+"));
    }

    /** The run's accesses made in libc's string functions, malloc and free: count by kind and instruction. */
    private Map<String, Integer> libcAccesses(Path prog, boolean fixedLayout) throws Exception {
        Path trace = dir.resolve(fixedLayout ? "fixed.trace" : "random.trace");
        String[] args = {"run", "--mode", "rewrite", "-o", trace.toString(), "--", prog.toString()};
        var r = fixedLayout ? Cli.runWithoutAslr(dir, args) : Cli.run(dir, args);
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stderr()).as("no module left unrewritten at run time").doesNotContain("unrewritten")
                .contains("memory instructions of /lib/x86_64-linux-gnu/libc.so.6 rewritten");
        TraceFile read = TraceFile.read(trace);
        // the punned jumps' stub pages are the runtime's, not the program's memory (rt_init.c, report_mapping)
        assertThat(read.comments()).as("mappings").noneMatch(c -> c.startsWith("mapping ") && c.contains("memtrace-stubs"));
        Map<String, Integer> count = new TreeMap<>();
        for (var l : read.lines()) {
            if (!l.access()) continue;
            String ip = l.field(2);
            if (ip.contains("memset") || ip.contains("strlen") || ip.startsWith("malloc+") || ip.startsWith("free+"))
                count.merge(l.type() + " " + ip, 1, Integer::sum);
        }
        return count;
    }
}
