package org.memtrace.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.memtrace.event.Event;
import org.memtrace.event.Event.AllocFunction;
import org.memtrace.heap.SymbolicNaming;
import org.memtrace.symbols.AddressSpace;
import org.memtrace.symbols.LoadedModule;
import org.memtrace.symbols.SymbolIndex;
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
 * Names a recorded-like stream the way the MadT writer does for every access: region, data name and code
 * name. The stream lives in libc and the dynamic loader at realistic addresses: code from a hot set of
 * real functions (traces repeat their instructions), data mostly in live heap blocks, then in libc's global
 * objects, the stack and heap gaps; 20 000 allocations and their frees precede it.
 *
 * <p>Run: {@code mvn -q test-compile} then
 * {@code java -cp target/classes:target/test-classes:<jmh jars> org.openjdk.jmh.Main NamingBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class NamingBenchmark {

    static final int EVENTS = 1 << 16;
    static final long LIBC_BIAS = 0x7f1234500000L;
    static final long LD_BIAS = 0x7f1234900000L;
    static final long HEAP = 0x555500000000L;
    static final long STACK = 0x7ffd00000000L;

    SymbolicNaming naming;
    Event.Access[] accesses;

    @Setup
    public void setUp() {
        Random random = new Random(42);
        naming = new SymbolicNaming(new AddressSpace());
        naming.observe(new Event.Module(1, LIBC_BIAS, new byte[0], "/lib/x86_64-linux-gnu/libc.so.6"));
        naming.observe(new Event.Module(1, LD_BIAS, new byte[0], "/lib64/ld-linux-x86-64.so.2"));
        naming.observe(new Event.Mapping(1, HEAP, HEAP + (256L << 20), 0, 3, true, "[heap]"));
        naming.observe(new Event.Mapping(1, STACK, STACK + (8L << 20), 0, 3, false, "[stack]"));
        LoadedModule libc = naming.addressSpace().modules().getFirst();
        SymbolIndex symbols = libc.image().symbols();
        List<SymbolIndex.Symbol> functions = symbols.functions();
        List<SymbolIndex.Symbol> objects = symbols.objects();

        long[] hotCode = new long[400];
        for (int i = 0; i < hotCode.length; i++) {
            SymbolIndex.Symbol f = functions.get(random.nextInt(functions.size()));
            hotCode[i] = LIBC_BIAS + f.start() + random.nextLong(Math.max(1, f.end() - f.start()));
        }
        List<long[]> live = new ArrayList<>();
        long next = HEAP + 0x290;
        for (int i = 0; i < 20_000; i++) {
            long size = 16 + random.nextInt(2048);
            long usable = (size + 15) & -16;
            long site = hotCode[random.nextInt(hotCode.length)] + 5;
            naming.observe(new Event.Alloc(1, AllocFunction.MALLOC, site, next, usable, new long[] {size, 0, 0, 0, 0, 0}));
            live.add(new long[] {next, usable});
            next += usable + 16;
            if (random.nextInt(4) == 0) {
                long[] victim = live.remove(random.nextInt(live.size()));
                naming.observe(new Event.Alloc(1, AllocFunction.FREE, site, 0, 0, new long[] {victim[0], 0, 0, 0, 0, 0}));
            }
        }
        accesses = new Event.Access[EVENTS];
        for (int i = 0; i < EVENTS; i++) {
            int kind = random.nextInt(100);
            long address;
            if (kind < 60) {
                long[] b = live.get(random.nextInt(live.size()));
                address = b[0] + random.nextLong(b[1]);
            } else if (kind < 85) {
                SymbolIndex.Symbol o = objects.get(random.nextInt(objects.size()));
                address = LIBC_BIAS + o.start() + random.nextLong(Math.max(1, o.end() - o.start()));
            } else if (kind < 95) {
                address = STACK + (8L << 20) - random.nextInt(1 << 16);
            } else {
                address = HEAP + random.nextLong(next - HEAP);
            }
            accesses[i] = new Event.Access(1, hotCode[random.nextInt(hotCode.length)], address, random.nextBoolean(), false);
        }
    }

    @Benchmark
    @OperationsPerInvocation(EVENTS)
    public void nameAccesses(Blackhole sink) {
        for (Event.Access a : accesses) {
            sink.consume(naming.data(a.address()));
            sink.consume(naming.region(a.address()));
            sink.consume(naming.code(a.ip()));
        }
    }

    @Benchmark
    @OperationsPerInvocation(EVENTS)
    public void dataOnly(Blackhole sink) {
        for (Event.Access a : accesses) sink.consume(naming.data(a.address()));
    }

    @Benchmark
    @OperationsPerInvocation(EVENTS)
    public void regionOnly(Blackhole sink) {
        for (Event.Access a : accesses) sink.consume(naming.region(a.address()));
    }

    @Benchmark
    @OperationsPerInvocation(EVENTS)
    public void codeOnly(Blackhole sink) {
        for (Event.Access a : accesses) sink.consume(naming.code(a.ip()));
    }
}
