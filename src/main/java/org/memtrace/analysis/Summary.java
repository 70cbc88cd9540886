package org.memtrace.analysis;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.HashSet;
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
 * the ring report about the quality of the run.
 */
public final class Summary implements EventConsumer {
    private final AccessInterpreter accesses;
    private final Set<Long> regions = new HashSet<>();
    private final Set<Integer> threads = new HashSet<>();
    private long loads, stores, copies, blockStores, fetches, allocations, releases, faults, windowsAtRisk;

    public Summary(InstructionShapes shapes) { this.accesses = new AccessInterpreter(shapes); }

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
            case Event.Block b -> {
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
            case Event.Mapping m when m.traced() -> regions.add(m.start());
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
        m.put("faults", faults);
        m.put("windowsAtRisk", windowsAtRisk);
        m.put("eventsLost", lost);
        return m;
    }

    /** Prints the table; {@code lost} comes from the ring header, {@code elapsed} from the launcher. */
    public void print(PrintWriter out, long lost, Duration elapsed) {
        out.println("memtrace summary");
        counts(lost).forEach((name, n) -> out.printf(Locale.ROOT, "  %-18s %,15d%n", label(name), n));
        out.printf(Locale.ROOT, "  %-18s %,15.3f s%n", "elapsed", elapsed.toNanos() / 1e9);
        out.flush();
    }

    /** memoryRegions → memory regions */
    private static String label(String camel) {
        return camel.replaceAll("([A-Z])", " $1").toLowerCase(Locale.ROOT);
    }
}
