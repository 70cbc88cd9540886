package org.memtrace.analysis;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.Set;
import org.memtrace.event.Event;
import org.memtrace.trace.AccessInterpreter;
import org.memtrace.trace.EventConsumer;
import org.memtrace.trace.InstructionShapes;
import org.memtrace.trace.TracedAccess;

/**
 * Table III of the MadT paper, counted from the stream the way the trace prints it (a read-modify-write is
 * a load and a store, the second half of a page straddle is not counted again), plus what the agent and
 * the ring report about the quality of the run. A compiled-in trace (a {@code .mtr} file) counts probe
 * records instead of faults and, for a selective build, the accuracy the selection bought (paper 001's
 * program-level MA and AIA, weighting each basic block by how often it ran).
 */
public final class Summary implements EventConsumer {
    private final AccessInterpreter accesses;
    private final Set<Long> regions = new HashSet<>();
    private final Set<Integer> threads = new HashSet<>();
    /** The instrumented files whose probes ran, by identity: each file's totals are one shared object. */
    private final Set<Event.SelectionTotals> modules = Collections.newSetFromMap(new IdentityHashMap<>());
    private final boolean compiledIn;
    private long loads, stores, copies, blockStores, fetches, allocations, releases, faults, windowsAtRisk;
    private long probes, blockExecutions, weightedRefs, weightedMa, weightedAia, computed;
    private Map<String, Long> declinedLoops = Map.of();
    private boolean selective;

    /** The program-level accuracy of a selective build: Σ exec(b)·block_ma (or aia) / Σ exec(b)·block_refs. */
    /**
     * {@code ma}/{@code aia}: the run's, weighted by executed blocks; {@code staticMa}/{@code staticAia}: the
     * selection's over every block of the instrumented files that ran, unweighted, as memtrace analyze
     * reports it.
     */
    public record Accuracy(long blockExecutions, double ma, double aia, double staticMa, double staticAia) {}

    /** A summary of a fault-mode run. */
    public Summary(InstructionShapes shapes) { this(shapes, false); }

    private Summary(InstructionShapes shapes, boolean compiledIn) {
        this.accesses = new AccessInterpreter(shapes);
        this.compiledIn = compiledIn;
    }

    /** A summary of a compiled-in trace: sizes and kinds come with the probes, no decoder is needed. */
    public static Summary ofProbes() { return new Summary(InstructionShapes.UNKNOWN, true); }

    @Override
    public void accept(Event event) {
        accesses.observe(event);
        threads.add(event.tid());
        switch (event) {
            case Event.Access a -> {
                faults++;
                for (TracedAccess t : accesses.interpret(a)) {
                    if (t.store()) stores++;
                    else loads++;
                }
            }
            case Event.Probe p -> {
                probes++;
                if (p.site().computed()) computed++;
                for (TracedAccess t : accesses.interpret(p)) {
                    if (t.store()) stores++;
                    else loads++;
                }
                Event.ProbeSite site = p.site();
                if (site.selective()) selective = true;
                if (site.firstOfBlock()) {
                    // every block that ran has run its first site, so its file is seen here, once per block run
                    modules.add(site.module());
                    blockExecutions++;
                    weightedRefs += site.blockRefs();
                    weightedMa += site.blockMa();
                    weightedAia += site.blockAia();
                }
            }
            case Event.Block b -> {
                if (compiledIn && !b.syscall() && b.what() >= Event.BlockFunction.REP_MOVS.code) probes++;
                switch (b.op()) {
                    case COPY -> copies++;
                    case STORE -> blockStores++;
                    case FETCH -> fetches++;
                }
            }
            case Event.Alloc a -> {
                switch (a.function()) {
                    case FREE -> { if (a.arg(0) != 0) releases++; }
                    case MUNMAP -> releases++;
                    default -> allocations++;
                }
            }
            // Probes reach any mapped memory, not only the ranges the fault agent protects.
            case Event.Mapping m when m.traced() || compiledIn -> regions.add(m.start());
            case Event.Range r when r.added() -> regions.add(r.start());
            case Event.Stats s -> windowsAtRisk = s.windowsAtRisk();
            default -> {}
        }
    }

    public long loads() { return loads; }

    public long stores() { return stores; }

    public long blockCopies() { return copies; }

    public long blockStores() { return blockStores; }

    public long blockFetches() { return fetches; }

    public long allocations() { return allocations; }

    public long releases() { return releases; }

    public int threads() { return threads.size(); }

    public int regions() { return regions.size(); }

    public long faults() { return faults; }

    /** Probe records of a compiled-in trace; a {@code rep} instruction counts once. */
    public long probes() { return probes; }

    /** Of the probes, the accesses a skeleton loop's replay computed instead of a record (memtrace cc --skeleton). */
    public long computed() { return computed; }

    /** The loops a skeleton build left in full mode, by reason (static, over the instrumented files that ran). */
    public void declinedLoops(Map<String, Long> byReason) { declinedLoops = Map.copyOf(byReason); }

    /** The selection's accuracy, for a selective build whose blocks ran at least once; empty otherwise. */
    public Optional<Accuracy> accuracy() {
        if (!selective || weightedRefs == 0) return Optional.empty();
        long refs = 0, ma = 0, aia = 0;
        for (Event.SelectionTotals t : modules) {
            refs += t.references();
            ma += t.ma();
            aia += t.aia();
        }
        return Optional.of(new Accuracy(blockExecutions, (double) weightedMa / weightedRefs, (double) weightedAia / weightedRefs,
                refs == 0 ? 1 : (double) ma / refs, refs == 0 ? 1 : (double) aia / refs));
    }

    /** The table's counts by name, for machine-readable output; {@code lost} comes from the ring header. */
    public Map<String, Long> counts(long lost) {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("memoryRegions", (long) regions.size());
        m.put("loads", loads);
        m.put("stores", stores);
        m.put("blockCopies", copies);
        m.put("blockStores", blockStores);
        m.put("blockFetches", fetches);
        m.put("allocations", allocations);
        m.put("releases", releases);
        m.put("threads", (long) threads.size());
        if (compiledIn) {
            m.put("probes", probes);
            if (computed > 0 || !declinedLoops.isEmpty()) {
                m.put("computed", computed);
                m.put("logged", probes - computed);
            }
        } else {
            m.put("faults", faults);
            m.put("windowsAtRisk", windowsAtRisk);
        }
        m.put("eventsLost", lost);
        accuracy().ifPresent(a -> m.put("blockExecutions", a.blockExecutions()));
        return m;
    }

    /**
     * Prints the table; {@code lost} comes from the ring header (or the .mtr end record), {@code elapsed}
     * from the launcher (null when a saved trace is printed: its run time is unknown).
     */
    public void print(PrintWriter out, long lost, Duration elapsed) {
        out.println("memtrace summary");
        counts(lost).forEach((name, n) -> out.printf(Locale.ROOT, "  %-18s %,15d%n", label(name), n));
        accuracy().ifPresent(a -> {
            out.printf(Locale.ROOT, "  %-18s %15.2f %%%n", "accuracy ma", 100 * a.ma());
            out.printf(Locale.ROOT, "  %-18s %15.2f %%%n", "accuracy aia", 100 * a.aia());
            out.printf(Locale.ROOT, "  %-18s %15.2f %%  (the selection over all blocks, as memtrace analyze counts it)%n",
                    "static ma", 100 * a.staticMa());
            out.printf(Locale.ROOT, "  %-18s %15.2f %%%n", "static aia", 100 * a.staticAia());
        });
        if (!declinedLoops.isEmpty()) {
            out.printf(Locale.ROOT, "  %-18s %,15d%n", "loops logged", declinedLoops.values().stream().mapToLong(Long::longValue).sum());
            new java.util.TreeMap<>(declinedLoops).forEach((reason, n) -> out.printf(Locale.ROOT, "    %-16s %,15d  %s%n", "", n, reason));
        }
        if (elapsed != null) out.printf(Locale.ROOT, "  %-18s %,15.3f s%n", "elapsed", elapsed.toNanos() / 1e9);
        if (compiledIn) out.println("  only code built with memtrace cc is traced: uninstrumented libraries' own accesses are not in the trace");
        out.flush();
    }

    /** memoryRegions → memory regions */
    private static String label(String camel) {
        return camel.replaceAll("([A-Z])", " $1").toLowerCase(Locale.ROOT);
    }
}
