package org.memtrace.bench;

import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.memtrace.event.Event;
import org.memtrace.symbols.AddressSpace;
import org.memtrace.symbols.DebugFiles;
import org.memtrace.symbols.DwarfLines;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.symbols.LineTable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Source lines of libc's code, from its separate debug file (libc6-dbg; about 140 000 rows after merging):
 * table lookups at uniformly random addresses of libc's functions (no cache helps), the address space's
 * cached {@code file:line} for a trace's hot set of instructions, and parsing the whole table once.
 *
 * <p>Run: {@code mvn -q test-compile} then
 * {@code java -cp target/classes:target/test-classes:<jmh jars> org.openjdk.jmh.Main SourceLineBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class SourceLineBenchmark {

    static final int LOOKUPS = 1 << 16;
    static final long LIBC_BIAS = 0x7f1234500000L;
    static final Path LIBC = Path.of("/lib/x86_64-linux-gnu/libc.so.6");

    ElfFile libc;
    ElfFile debug;
    LineTable table;
    AddressSpace space;
    long[] randomAddresses;
    long[] traceIps;

    @Setup
    public void setUp() throws Exception {
        libc = ElfFile.read(LIBC);
        debug = DebugFiles.system().find(libc).orElseThrow(() -> new IllegalStateException("libc6-dbg is not installed"));
        table = DwarfLines.read(debug, libc.loadSegments());
        if (table.isEmpty()) throw new IllegalStateException("libc has no lines: " + table.problem().orElse("?"));
        space = new AddressSpace();
        space.observe(new Event.Module(1, LIBC_BIAS, new byte[0], LIBC.toString()));

        Random random = new Random(42);
        List<ElfSymbol> functions = debug.symtab().stream().filter(s -> s.isFunction() && s.isDefined() && s.size() > 0).toList();
        randomAddresses = new long[LOOKUPS];
        for (int i = 0; i < LOOKUPS; i++) {
            ElfSymbol f = functions.get(random.nextInt(functions.size()));
            randomAddresses[i] = f.value() + random.nextLong(f.size());
        }
        // A trace repeats a few hundred instructions: draw its ips from a hot set, as NamingBenchmark does.
        long[] hot = new long[400];
        for (int i = 0; i < hot.length; i++) hot[i] = LIBC_BIAS + randomAddresses[random.nextInt(LOOKUPS)];
        traceIps = new long[LOOKUPS];
        for (int i = 0; i < LOOKUPS; i++) traceIps[i] = hot[random.nextInt(hot.length)];
    }

    /** The table itself: a binary search per lookup and a SourceLine made for the answer. */
    @Benchmark
    @OperationsPerInvocation(LOOKUPS)
    public void lineOfRandomAddresses(Blackhole sink) {
        for (long a : randomAddresses) sink.consume(table.lineOf(a));
    }

    /** What a trace writer would call per access: {@code file:line} of a run-time ip, remembered per ip. */
    @Benchmark
    @OperationsPerInvocation(LOOKUPS)
    public void sourceOfTraceIps(Blackhole sink) {
        for (long ip : traceIps) sink.consume(space.source(ip));
    }

    /** Inflating and decoding libc's whole .debug_line (the debug file is already open and mapped). */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public LineTable parseLibcLines() {
        return DwarfLines.read(debug, libc.loadSegments());
    }
}
