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
 * Names a recorded-like stream the way the MadT writer does for every access: data name, region and code
 * name. The stream lives in libc and the dynamic loader at real symbol addresses: code from a hot set of
 * real functions (traces repeat their instructions), data in live heap blocks, libc's global objects, the
 * stack and heap gaps; 20 000 allocations and their frees precede it. Two shapes: loops walking one to three
 * arrays (heap blocks or globals) in step, and uniformly random accesses.
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
    Event.Access[] loops;

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
        random = new Random(7);
        for (int i = 0; i < EVENTS; i++) {
            accesses[i] = new Event.Access(1, hotCode[random.nextInt(hotCode.length)],
                    anyAddress(random, live, objects, next), random.nextBoolean(), false);
        }
        loops = new Event.Access[EVENTS];
        for (int i = 0; i < EVENTS; ) {
            // A loop body: a few instructions walking a few arrays in step, like findDisparity over three images.
            int arrays = 1 + random.nextInt(3);
            long[] base = new long[arrays];
            long[] limit = new long[arrays];
            for (int k = 0; k < arrays; k++) {
                if (random.nextInt(4) == 0) {
                    SymbolIndex.Symbol o = objects.get(random.nextInt(objects.size()));
                    base[k] = LIBC_BIAS + o.start();
                    limit[k] = Math.max(1, o.end() - o.start());
                } else {
                    long[] b = live.get(random.nextInt(live.size()));
                    base[k] = b[0];
                    limit[k] = b[1];
                }
            }
            int body = hotCode.length - arrays;
            int first = random.nextInt(body);
            int iterations = 1 + random.nextInt(64);
            for (int it = 0; it < iterations && i < EVENTS; it++) {
                for (int k = 0; k < arrays && i < EVENTS; k++) {
                    loops[i++] = new Event.Access(1, hotCode[first + k], base[k] + (it * 8L) % limit[k], k == arrays - 1, false);
                }
            }
            if (i < EVENTS && random.nextInt(4) == 0) {
                loops[i++] = new Event.Access(1, hotCode[random.nextInt(hotCode.length)], STACK + (8L << 20) - random.nextInt(1 << 12), true, false);
            }
        }
    }

    private static long anyAddress(Random random, List<long[]> live, List<SymbolIndex.Symbol> objects, long heapEnd) {
        int kind = random.nextInt(100);
        if (kind < 60) {
            long[] b = live.get(random.nextInt(live.size()));
            return b[0] + random.nextLong(b[1]);
        }
        if (kind < 85) {
            SymbolIndex.Symbol o = objects.get(random.nextInt(objects.size()));
            return LIBC_BIAS + o.start() + random.nextLong(Math.max(1, o.end() - o.start()));
        }
        if (kind < 95) return STACK + (8L << 20) - random.nextInt(1 << 16);
        return HEAP + random.nextLong(heapEnd - HEAP);
    }

    /** Loops walking arrays, as traces are: the realistic case. */
    @Benchmark
    @OperationsPerInvocation(EVENTS)
    public void nameLoops(Blackhole sink) {
        name(loops, sink);
    }

    /** Every access anywhere, uniformly at random: the worst case for caches. */
    @Benchmark
    @OperationsPerInvocation(EVENTS)
    public void nameRandomAccesses(Blackhole sink) {
        name(accesses, sink);
    }

    private void name(Event.Access[] stream, Blackhole sink) {
        for (Event.Access a : stream) {
            sink.consume(naming.data(a.address()));
            sink.consume(naming.region(a.address()));
            sink.consume(naming.code(a.ip()));
        }
    }
}
