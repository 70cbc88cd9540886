package org.memtrace.bench;

import java.io.OutputStream;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.memtrace.analysis.Interpretation;
import org.memtrace.analysis.Summary;
import org.memtrace.event.Event;
import org.memtrace.madt.AddressMode;
import org.memtrace.madt.MadtWriter;
import org.memtrace.trace.InstructionShapes;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The hot path of {@code memtrace run} on a program that records itself (memtrace cc, {@code --mode rewrite}):
 * probe records by their fields into the interpretation stage that {@code RunCommand} builds, with the MadT
 * text writer (symbolic lines, to a null stream; its bytes on its own thread or on this one, {@link #threaded})
 * and the summary, as {@code MtrReader} hands them over. The
 * records are {@link NamingBenchmark}'s streams (libc's real symbols, 20 000 heap blocks, the stack), each
 * instruction a probe site: {@code loops} walks arrays, {@code random} is uniformly anywhere (the caches'
 * worst case), {@code heapAndStack} is {@code loops} without libc's globals (typed by its debug file, so named
field by field): heap blocks and the stack, most of what a rewritten python3 touches. Reports ns per record
(issue 27: at most 100 ns for the whole JVM side of a run); {@code heapAndStack} per invocation (its setup
prints its records).
 *
 * <p>Run: {@code bench/jmh.sh RunStageBenchmark} ({@code -f 1 -wi 3 -i 5} for a quick one); with
 * {@code -jvmArgsAppend -XX:TieredStopAtLevel=1} as the launcher runs {@code memtrace run}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class RunStageBenchmark {
    private long[] loopAddresses, blockAddresses, randomAddresses;
    private Event.ProbeSite[] loopSites, blockSites, randomSites, manySites;
    static final int MANY_SITES = 40_000;
    private Interpretation stage;
    /**
     * The text's bytes made and written on the writer's own thread (what {@code print} does on two processors),
     * or on this one (what {@code run} does): with the thread, the time per record is the slower of the two threads'.
     */
    @Param({"true", "false"})
    public boolean threaded;

    @Setup
    public void setUp() {
        NamingBenchmark world = new NamingBenchmark();
        world.setUp();
        Map<Long, Event.ProbeSite> sites = new HashMap<>();
        loopAddresses = new long[world.loops.length];
        loopSites = new Event.ProbeSite[world.loops.length];
        fill(world.loops, sites, loopAddresses, loopSites);
        // the loops without libc's globals, which its debug file types (named field by field, address by
        // address): heap blocks and the stack, as most of a rewritten python3's records are
        Event.Access[] untyped = java.util.Arrays.stream(world.loops)
                .filter(a -> a.address() < NamingBenchmark.LIBC_BIAS || a.address() >= NamingBenchmark.STACK).toArray(Event.Access[]::new);
        blockAddresses = new long[untyped.length];
        blockSites = new Event.ProbeSite[untyped.length];
        fill(untyped, sites, blockAddresses, blockSites);
        System.out.println("heapAndStack: " + untyped.length + " records per invocation");
        // sites 7 bytes apart in libc's text, named as its functions: each record's drawn at random
        Event.ProbeSite[] spread = new Event.ProbeSite[MANY_SITES];
        for (int i = 0; i < MANY_SITES; i++)
            spread[i] = new Event.ProbeSite(NamingBenchmark.LIBC_BIAS + 0x30000 + 7L * i, i % 3 == 0 ? Event.ProbeKind.STORE : Event.ProbeKind.LOAD,
                    8, 0, 0, 1, 1, 0, 0, 0, Event.SelectionTotals.NONE);
        java.util.Random random = new java.util.Random(11);
        manySites = new Event.ProbeSite[untyped.length];
        for (int i = 0; i < untyped.length; i++) manySites[i] = spread[random.nextInt(MANY_SITES)];
        randomAddresses = new long[world.accesses.length];
        randomSites = new Event.ProbeSite[world.accesses.length];
        fill(world.accesses, sites, randomAddresses, randomSites);
        stage = new Interpretation(world.naming, InstructionShapes.UNKNOWN, List.of(
                new MadtWriter(OutputStream.nullOutputStream(), AddressMode.SYMBOLIC, world.naming, p -> {}, threaded), new Summary(true)));
        // libc's DWARF types are read at the first typed global (a second or more): not in a measurement
        run(randomAddresses, randomSites);
    }

    /** One site per instruction and kind, shared by its records as a site table's are. */
    private static void fill(Event.Access[] stream, Map<Long, Event.ProbeSite> sites, long[] addresses, Event.ProbeSite[] into) {
        for (int i = 0; i < stream.length; i++) {
            Event.Access a = stream[i];
            Event.ProbeKind kind = a.write() ? Event.ProbeKind.STORE : Event.ProbeKind.LOAD;
            addresses[i] = a.address();
            into[i] = sites.computeIfAbsent(a.ip() << 1 | (a.write() ? 1 : 0),
                    k -> new Event.ProbeSite(a.ip(), kind, 8, 0, 0, 1, 1, 0, 0, 0, Event.SelectionTotals.NONE));
        }
    }

    @Benchmark
    @OperationsPerInvocation(NamingBenchmark.EVENTS)
    public void loops() {
        run(loopAddresses, loopSites);
    }

    /** Per record: {@link #heapAndStack}'s invocation covers fewer records than the others; divide by {@code blockAddresses.length}. */
    @Benchmark
    public void heapAndStack() {
        run(blockAddresses, blockSites);
    }

    /** Per invocation as {@link #heapAndStack}: the same records, each at one of {@value #MANY_SITES} sites. */
    @Benchmark
    public void manySites() {
        run(blockAddresses, manySites);
    }

    @Benchmark
    @OperationsPerInvocation(NamingBenchmark.EVENTS)
    public void random() {
        run(randomAddresses, randomSites);
    }

    private void run(long[] addresses, Event.ProbeSite[] sites) {
        for (int i = 0; i < addresses.length; i++) stage.probe(1, addresses[i], sites[i]);
    }
}
