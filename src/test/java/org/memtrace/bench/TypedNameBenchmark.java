package org.memtrace.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.memtrace.symbols.DebugFiles;
import org.memtrace.symbols.DwarfTypes;
import org.memtrace.symbols.ModuleImage;
import org.memtrace.symbols.SymbolIndex;
import org.memtrace.testutil.Gcc;
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
 * Names every byte of typed arrays of array_shapes.c (arrays of structs, multi-dimensional arrays, a 64x64
 * matrix of doubles) as a cache miss of the trace writer does: {@code path}, by arithmetic on arrays
 * (issue 22), against {@code walk}, the walk over the types per address that it replaced and must equal
 * (DwarfTypesTest). Nanoseconds per name. Needs gcc. Run: {@code bench/jmh.sh TypedNameBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class TypedNameBenchmark {
    static final int NAMES = 1 << 15;
    /** gemm's matrix and arrays of structs, multi-dimensional and nested: what the traces of issue 22 name. */
    static final List<String> WALKED = List.of("matrix", "padded", "cube", "nests", "rows_of_rows");

    DwarfTypes types;
    long[] starts = new long[NAMES];
    long[] offsets = new long[NAMES];

    @Setup
    public void setUp() throws Exception {
        Path dir = Files.createTempDirectory("memtrace-typed-names");
        Path exe = Gcc.compile(dir, "array_shapes.c", "array_shapes", "-g");
        ModuleImage image = ModuleImage.load(exe.toString(), DebugFiles.system());
        types = image.types();
        List<long[]> bytes = new ArrayList<>();
        for (SymbolIndex.Symbol o : image.symbols().objects()) {
            if (!WALKED.contains(o.name())) continue;
            for (long off = 0; off < o.end() - o.start(); off++) bytes.add(new long[] {o.start(), off});
        }
        // Every byte in address order, repeated to fill: what a walk over the arrays asks for.
        for (int i = 0; i < NAMES; i++) {
            starts[i] = bytes.get(i % bytes.size())[0];
            offsets[i] = bytes.get(i % bytes.size())[1];
        }
    }

    @Benchmark
    @OperationsPerInvocation(NAMES)
    public void path(Blackhole bh) {
        for (int i = 0; i < NAMES; i++) bh.consume(types.path(starts[i], offsets[i]));
    }

    @Benchmark
    @OperationsPerInvocation(NAMES)
    public void walk(Blackhole bh) {
        for (int i = 0; i < NAMES; i++) bh.consume(types.walkPath(starts[i], offsets[i]));
    }
}
