package org.memtrace.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.memtrace.analysis.Analysis;
import org.memtrace.analysis.CacheSimulation;
import org.memtrace.analysis.Ending;
import org.memtrace.analysis.Interpretation;
import org.memtrace.analysis.MultiCoreSimulation;
import org.memtrace.cache.CacheGeometry;
import org.memtrace.cache.CacheHierarchy;
import org.memtrace.cache.CoherentCaches;
import org.memtrace.cache.Policy;
import org.memtrace.heap.SymbolicNaming;
import org.memtrace.io.IoReason;
import org.memtrace.launch.LaunchException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code memtrace cachesim}: the trace's data accesses through a simulated cache hierarchy. */
@Command(name = "cachesim", mixinStandardHelpOptions = true,
        description = {"Simulates set-associative caches over a trace's data accesses: misses per level, instruction and object.",
                "LRU, FIFO, random or tree-PLRU; write-allocate, write-back. The grammar of its options and outputs: docs/cachesim.md."},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:the simulation ran", "1:the trace is damaged or cut short (what precedes the damage is simulated), or the results could not be written",
                "2:usage error (bad option, no such trace file, a file that is not a trace, unwritable output)"})
final class CacheSimCommand implements Callable<Integer> {
    @Spec CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "TRACE", description = "A .mtr file (a program built with memtrace cc) or a saved event stream (memtrace run --save-stream).")
    Path trace;

    @Option(names = "--no-demangle", description = "Keep C++ names as the symbol tables spell them (_ZN2ns3Box3putEi), not ns::Box::put(int).")
    boolean noDemangle;

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

    @Option(names = "--cores", paramLabel = "N",
            description = "Simulate N cores: the k-th thread runs on core k mod N; L1 (and L2 when --l3 is given) private per core, "
                    + "the last of two or more levels shared, kept coherent (MESI); reports the lines that moved between cores "
                    + "and whether that was false sharing.")
    Integer cores;

    @Option(names = "--lines", description = "Also rank source lines (file:line from the DWARF line table of a program built with -g) "
            + "by misses, each instruction's misses added to its line, as cg_annotate does.")
    boolean lines;

    @Option(names = "--annotate", description = "Also print the source of the files with the most misses, the counts beside each line "
            + "(loads, stores, and their misses at each level), as cg_annotate does; the files are read from the paths of the DWARF line table.")
    boolean annotate;

    @Option(names = "--source-dir", paramLabel = "DIR", description = "With --annotate: look up source paths that are relative "
            + "(to the compilation directory) in DIR first; may be repeated (cg_annotate's -I).")
    List<Path> sourceDirs = new ArrayList<>();

    @Option(names = "--json", paramLabel = "FILE", description = "Also write the results as JSON to FILE ('-' for standard output).")
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
        // one core, or --cores: the same reading through another analysis
        CacheHierarchy caches = cores == null ? hierarchy() : null;
        CoherentCaches coherent = cores == null ? null : coherent();
        if (top < 0) throw new CommandLine.ParameterException(spec.commandLine(), "--top must not be negative");
        if ((lines || annotate) && cores != null)
            throw new CommandLine.ParameterException(spec.commandLine(), (lines ? "--lines" : "--annotate") + " works on one core: leave out --cores");
        try (OutputFile jsonFile = json == null ? null : OutputFile.create(json, List.of(trace))) {
            SymbolicNaming naming = new SymbolicNaming();
            if (noDemangle) naming.addressSpace().keepRawNames();
            // with the JSON on standard output, the text goes to standard error: the JSON stays parseable
            if (jsonFile != null && jsonFile.toStandardOutput()) out = err;
            var output = new CacheSimulation.Output(out, jsonFile == null ? null : jsonFile.temporary(), top, trace.toString(),
                    policy.name().toLowerCase(Locale.ROOT), seed, lines, annotate, List.copyOf(sourceDirs));
            Analysis sim = caches != null ? new CacheSimulation(caches, naming).writeTo(output)
                    : new MultiCoreSimulation(coherent, naming).writeTo(output);
            Interpretation stage = new Interpretation(naming, TraceInput.shapes(naming.addressSpace(), err), List.of(sim));
            TraceInput.Outcome read = TraceInput.replay(trace, stage, Progress.onTerminal(err, "cachesim"));
            List<String> problems = stage.finish(Ending.offline(read.events(), stage.events(), 0, Map.of()));
            if (!problems.isEmpty()) throw LaunchException.environment(String.join("; ", problems), null);
            if (jsonFile != null) {
                try {
                    jsonFile.commit();
                } catch (IOException e) {
                    throw LaunchException.environment("cannot write " + jsonFile.shown() + ": " + IoReason.of(e), e);
                }
            }
            out.flush();
            if (out.checkError()) throw LaunchException.environment("cannot write the results to standard output", null);
            // the simulation of what precedes the damage is printed, and the damage said
            return TraceInput.reportProblems(trace, read, err);
        } catch (IOException e) {
            throw LaunchException.environment("cannot write " + json + ": " + IoReason.of(e), e);
        }
    }

    private CoherentCaches coherent() {
        try {
            return new CoherentCaches(geometries(), true, cores, policy, seed);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    private CacheHierarchy hierarchy() {
        try {
            return new CacheHierarchy(geometries(), policy, seed);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    private List<CacheGeometry> geometries() {
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
        return levels;
    }
}
