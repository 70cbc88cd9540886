package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.FunctionRanges;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.LackeyLog;
import org.memtrace.testutil.TraceFile;
import org.memtrace.testutil.TraceFile.Line;

/**
 * The agent's own allocator (agent/heap.c): malloc & co. are served from a memfd the agent reaches through
 * its alias view, so allocating opens no page. Real programs, the real agent, Lackey as the reference.
 */
class HeapAllocatorTest {
    @TempDir Path dir;

    private static final List<String> FUNCTIONS = List.of("work", "drain", "fill", "total");

    private static long windowsAtRisk(String stderr) {
        return stderr.lines().map(String::strip).filter(l -> l.startsWith("windows at risk"))
                .map(l -> l.substring("windows at risk".length()).strip().replace(",", "")).mapToLong(Long::parseLong)
                .findFirst().orElseThrow(() -> new AssertionError("no windows at risk in the summary:\n" + stderr));
    }

    private static List<String> withoutStacks(String out) {
        return out.lines().filter(l -> !l.startsWith("stack ")).toList();
    }

    /** Three threads allocate, resize, align and free; then each frees the blocks its neighbour left. */
    @Test
    void threadsAllocatingAndFreeingEachOthersBlocksAgreeWithLackeyPerInstruction() throws Exception {
        Path prog = Gcc.compile(dir, "heap_stress.c", "heap_stress", "-O1", "-g", "-no-pie", "-pthread");
        FunctionRanges ranges = FunctionRanges.of(prog, FUNCTIONS);
        Path trace = dir.resolve("stress.trace");
        var r = Cli.run(dir, "run", "--mode", "fault", "--addresses", "raw", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        List<String> plain = withoutStacks(Gcc.run(List.of(prog.toString())));
        assertThat(withoutStacks(r.stdout())).isEqualTo(plain).hasSize(3).noneMatch(l -> l.contains("misaligned"));
        assertThat(windowsAtRisk(r.stderr())).isZero();

        Map<Long, Long> loads = new TreeMap<>(), stores = new TreeMap<>();
        TraceFile t = TraceFile.read(trace);
        for (Line l : t.lines()) {
            if (l.access() && ranges.contains(l.number(2))) (l.type() == 'L' ? loads : stores).merge(l.number(2), 1L, Long::sum);
        }
        // every block the threads freed was one the trace saw allocated, whichever thread freed it
        assertThat(t.of('F')).hasSizeGreaterThan(3 * 1000);

        Path log = dir.resolve("lackey.log");
        String underLackey = Gcc.run(List.of("env", "LD_BIND_NOW=1", "valgrind", "--tool=lackey", "--trace-mem=yes",
                "--log-file=" + log, prog.toString()));
        assertThat(withoutStacks(underLackey)).isEqualTo(plain);
        List<Long> stacks = underLackey.lines().filter(l -> l.startsWith("stack "))
                .map(l -> Long.parseUnsignedLong(l.substring(l.indexOf("0x") + 2), 16)).toList();
        assertThat(stacks).hasSize(3);
        Map<Long, Long> refLoads = new TreeMap<>(), refStores = new TreeMap<>();
        LackeyLog.forEachAccess(log, (ip, kind, address) -> {
            // memtrace never traces stacks: each thread's frames lie within 64 KiB of its marker
            if (!ranges.contains(ip) || stacks.stream().anyMatch(s -> Math.abs(address - s) < 65536)) return;
            (kind == 'L' ? refLoads : refStores).merge(ip, 1L, Long::sum);
        });
        assertThat(refLoads).as("Lackey saw no loads: parsing failed").isNotEmpty();
        assertThat(loads).isEqualTo(refLoads);
        assertThat(stores).isEqualTo(refStores);
    }

    /** A realloc chain 8 B -> 1 MiB -> 8 B, aligned allocations up to 1 MiB, and a fork that resizes a block. */
    @Test
    void reallocChainsAlignmentsAndForkKeepContentsAndTheEventContract() throws Exception {
        Path prog = Gcc.compile(dir, "realloc_chain.c", "realloc_chain", "-g", "-no-pie");
        Path trace = dir.resolve("chain.trace");
        var r = Cli.run(dir, "run", "--mode", "fault", "--addresses", "raw", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        List<String> out = r.stdout().lines().toList();
        assertThat(out).contains("chain 34 steps ok", "page aligned 8192", "fork child 0 parent ok")
                .noneMatch(l -> l.contains("misaligned"));
        TraceFile t = TraceFile.read(trace);

        // each step of the chain names the previous step's block as its old block, with its new size
        List<Line> chain = t.of('R');
        assertThat(chain).hasSize(34);
        long size = 8;
        long previous = chain.getFirst().number(2);
        long first = previous;
        assertThat(t.of('M')).anyMatch(l -> l.number(0) == first && l.field(1).equals("8"));
        for (int i = 0; i < chain.size(); i++) {
            size = i < 17 ? size * 2 : size / 2;
            Line step = chain.get(i);
            assertThat(step.field(1)).as("step %d", i).isEqualTo(Long.toString(size));
            assertThat(step.number(2)).as("step %d", i).isEqualTo(previous);
            previous = step.number(0);
        }
        assertThat(t.of('F').stream().map(l -> l.number(0))).contains(previous);

        // every aligned block the program printed is in the trace, aligned as asked
        List<long[]> aligned = new ArrayList<>();
        for (String l : out) {
            if (!l.startsWith("align ")) continue;
            String[] f = l.split(" ");
            aligned.add(new long[] {Long.parseLong(f[1]), Long.parseUnsignedLong(f[2].substring(2), 16)});
        }
        assertThat(aligned).hasSize(3 * 9); // alignments 16, 64, ..., 1 MiB
        List<Long> allocated = t.of('M').stream().map(l -> l.number(0)).toList();
        assertThat(aligned).allSatisfy(a -> {
            assertThat(a[1] % a[0]).isZero();
            assertThat(allocated).contains(a[1]);
        });
        // the child records nothing: one fork, and no event of the child's realloc to 300,000 bytes
        assertThat(t.comments()).anyMatch(c -> c.startsWith("fork "));
        assertThat(chain).noneMatch(l -> l.field(1).equals("300000"));
    }
}
