package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
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

/**
 * Valgrind's Lackey as an independent reference: per instruction of the program's own functions, the
 * number of loads and of stores to non-stack memory memtrace records equals what Lackey sees. Built
 * -no-pie so that code addresses are the same under both tools.
 */
class LackeyComparisonTest {
    @TempDir Path dir;

    private static final List<String> FUNCTIONS = List.of("main", "fill", "bump", "total", "build", "walk");

    /** Loads and stores counted per instruction address. */
    record Counts(Map<Long, Long> loads, Map<Long, Long> stores) {
        Counts() { this(new TreeMap<>(), new TreeMap<>()); }
        void add(Map<Long, Long> to, long ip) { to.merge(ip, 1L, Long::sum); }
    }

    @Test
    void loadsAndStoresPerInstructionAgreeWithLackey() throws Exception {
        Path prog = Gcc.compile(dir, "lackey_cmp.c", "cmp", "-O1", "-g", "-no-pie");
        FunctionRanges ranges = FunctionRanges.of(prog, FUNCTIONS);

        Path trace = dir.resolve("cmp.trace");
        var r = Cli.run(dir, "run", "--mode", "fault", "--addresses", "raw", "-q", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        Counts memtrace = new Counts();
        for (var l : TraceFile.read(trace).lines()) {
            if (!l.access()) continue;
            long ip = l.number(2);
            if (!ranges.contains(ip)) continue;
            memtrace.add(l.type() == 'L' ? memtrace.loads() : memtrace.stores(), ip);
        }

        Path log = dir.resolve("lackey.log");
        Gcc.run(List.of("env", "LD_BIND_NOW=1", "valgrind", "--tool=lackey", "--trace-mem=yes",
                "--log-file=" + log, prog.toString()));
        Counts reference = new Counts();
        LackeyLog.forEachAccess(log, (ip, kind, address) -> {
            if (ranges.contains(ip) && !isValgrindStack(address)) {
                reference.add(kind == 'L' ? reference.loads() : reference.stores(), ip);
            }
        });

        assertThat(reference.loads()).as("Lackey saw no loads: parsing failed").isNotEmpty();
        assertThat(memtrace.loads()).isEqualTo(reference.loads());
        assertThat(memtrace.stores()).isEqualTo(reference.stores());
    }

    /** Valgrind places the client's main stack just below 0x2000000000 on x86-64; memtrace never traces stacks. */
    private static boolean isValgrindStack(long address) {
        return address >= 0x1000000000L && address < 0x2000000000L;
    }
}
