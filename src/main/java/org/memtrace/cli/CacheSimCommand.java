package org.memtrace.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.memtrace.analysis.CacheSimulation;
import org.memtrace.analysis.Interpretation;
import org.memtrace.cache.CacheGeometry;
import org.memtrace.cache.CacheHierarchy;
import org.memtrace.cache.LevelStats;
import org.memtrace.cache.Policy;
import org.memtrace.heap.SymbolicNaming;
import org.memtrace.launch.LaunchException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code memtrace cachesim}: the trace's data accesses through a simulated cache hierarchy. */
@Command(name = "cachesim", mixinStandardHelpOptions = true,
        description = {"Simulates set-associative caches over a trace's data accesses: misses per level, instruction and object.",
                "LRU, FIFO, random or tree-PLRU; write-allocate, write-back. See docs/cachesim.md."},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:the simulation ran", "1:the trace is corrupt or the JSON could not be written",
                "2:usage error (bad option, no such trace file, a file that is not a trace, unwritable output)"})
final class CacheSimCommand implements Callable<Integer> {
    @Spec CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "TRACE", description = "A .mtr file (a program built with memtrace cc) or a saved event stream (memtrace run --save-stream).")
    Path trace;

    @Option(names = "--l1", paramLabel = "SIZE:WAYS:LINE", defaultValue = "32k:8:64",
            description = "First-level data cache (default: ${DEFAULT-VALUE}).")
    String l1;

    @Option(names = "--l2", paramLabel = "SIZE:WAYS:LINE", description = "Second level, e.g. 1m:16:64.")
    String l2;

    @Option(names = "--l3", paramLabel = "SIZE:WAYS:LINE", description = "Third level (needs --l2).")
    String l3;

    @Option(names = "--policy", paramLabel = "POLICY", defaultValue = "lru",
            description = "Replacement: lru, fifo, random or plru (tree pseudo-LRU) (default: ${DEFAULT-VALUE}).",
            converter = PolicyName.class)
    Policy policy;

    @Option(names = "--seed", paramLabel = "N", defaultValue = "1", description = "Seed of the random policy (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--top", paramLabel = "N", defaultValue = "10",
            description = "Instructions and objects listed per ranking (default: ${DEFAULT-VALUE}).")
    int top;

    @Option(names = "--json", paramLabel = "FILE", description = "Also write the results as JSON to FILE.")
    Path json;

    /** A policy as users type it; the error lists the names in that form too. */
    static final class PolicyName implements CommandLine.ITypeConverter<Policy> {
        @Override
        public Policy convert(String name) {
            for (Policy p : Policy.values()) if (p.name().equalsIgnoreCase(name)) return p;
            throw new CommandLine.TypeConversionException("unknown policy '" + name + "' (use lru, fifo, random or plru)");
        }
    }

    @Override
    public Integer call() throws LaunchException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        CacheHierarchy caches = hierarchy();
        if (top < 0) throw new CommandLine.ParameterException(spec.commandLine(), "--top must not be negative");
        try (OutputFile jsonFile = json == null ? null : OutputFile.create(json)) {
            SymbolicNaming naming = new SymbolicNaming();
            CacheSimulation sim = new CacheSimulation(caches, naming);
            Interpretation input = new Interpretation(naming, TraceInput.shapes(naming.addressSpace(), err), sim);
            long events = TraceInput.replayWhole(trace, input::accept, Progress.onTerminal(err, "cachesim"), err);
            sim.finish();
            print(out, sim, events);
            if (jsonFile != null) {
                try {
                    new ObjectMapper().writerWithDefaultPrettyPrinter().writeValue(jsonFile.temporary().toFile(), json(sim, events));
                    jsonFile.commit();
                } catch (IOException e) {
                    throw LaunchException.environment("cannot write " + json + ": " + LaunchException.reason(e), e);
                }
            }
        }
        return 0;
    }

    private CacheHierarchy hierarchy() {
        if (l3 != null && l2 == null) throw new CommandLine.ParameterException(spec.commandLine(), "--l3 needs --l2");
        List<CacheGeometry> levels = new ArrayList<>();
        for (String[] level : new String[][] {{"--l1", l1}, {"--l2", l2}, {"--l3", l3}}) {
            if (level[1] == null) continue;
            try {
                levels.add(CacheGeometry.parse(level[1]));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), level[0] + ": " + e.getMessage());
            }
        }
        try {
            return new CacheHierarchy(levels, policy, seed);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    private void print(PrintWriter out, CacheSimulation sim, long events) {
        List<LevelStats> levels = sim.levels();
        out.printf(Locale.ROOT, "memtrace cachesim: %s, policy %s, %,d events, %,d loads and stores, %,d block operations%n",
                trace, policy.name().toLowerCase(Locale.ROOT), events, sim.accesses(), sim.blockOperations());
        out.printf(Locale.ROOT, "%-5s %-12s %15s %15s %8s %15s %15s %15s %15s %15s%n", "level", "geometry", "accesses",
                "misses", "miss%", "loads", "load misses", "stores", "store misses", "writebacks");
        for (LevelStats l : levels)
            out.printf(Locale.ROOT, "%-5s %-12s %,15d %,15d %7.3f%% %,15d %,15d %,15d %,15d %,15d%n", l.name(), l.geometry(),
                    l.accesses(), l.misses(), 100 * l.missRatio(), l.loads(), l.loadMisses(), l.stores(), l.storeMisses(),
                    l.writebacks());
        String ll = levels.getLast().name();
        boolean one = levels.size() == 1;
        ranking(out, "instructions by L1 misses", sim.topInstructions(top, false), one, ll);
        if (!one) ranking(out, "instructions by " + ll + " misses", sim.topInstructions(top, true), false, ll);
        ranking(out, "objects by L1 misses", sim.topObjects(top, false), one, ll);
        if (!one) ranking(out, "objects by " + ll + " misses", sim.topObjects(top, true), false, ll);
        out.flush();
    }

    private static void ranking(PrintWriter out, String title, List<CacheSimulation.Misses> rows, boolean oneLevel, String ll) {
        if (rows.isEmpty()) return;
        out.println();
        out.println("top " + title);
        if (oneLevel) out.printf(Locale.ROOT, "  %15s  %s%n", "L1 misses", "name");
        else out.printf(Locale.ROOT, "  %15s %15s  %s%n", "L1 misses", ll + " misses", "name");
        for (CacheSimulation.Misses m : rows) {
            if (oneLevel) out.printf(Locale.ROOT, "  %,15d  %s%n", m.firstLevel(), m.name());
            else out.printf(Locale.ROOT, "  %,15d %,15d  %s%n", m.firstLevel(), m.lastLevel(), m.name());
        }
    }

    private Map<String, Object> json(CacheSimulation sim, long events) {
        Map<String, Object> j = new LinkedHashMap<>();
        j.put("trace", trace.toString());
        j.put("policy", policy.name().toLowerCase(Locale.ROOT));
        j.put("seed", seed);
        j.put("events", events);
        j.put("accesses", sim.accesses());
        j.put("blockOperations", sim.blockOperations());
        List<Map<String, Object>> levels = new ArrayList<>();
        for (LevelStats l : sim.levels()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", l.name());
            m.put("geometry", l.geometry().toString());
            m.put("accesses", l.accesses());
            m.put("misses", l.misses());
            m.put("missRatio", l.missRatio());
            m.put("loads", l.loads());
            m.put("loadMisses", l.loadMisses());
            m.put("stores", l.stores());
            m.put("storeMisses", l.storeMisses());
            m.put("writebacks", l.writebacks());
            levels.add(m);
        }
        j.put("levels", levels);
        j.put("instructionsByFirstLevelMisses", sim.topInstructions(top, false));
        j.put("instructionsByLastLevelMisses", sim.topInstructions(top, true));
        j.put("objectsByFirstLevelMisses", sim.topObjects(top, false));
        j.put("objectsByLastLevelMisses", sim.topObjects(top, true));
        return j;
    }
}
