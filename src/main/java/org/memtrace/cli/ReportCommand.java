package org.memtrace.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.memtrace.analysis.Ending;
import org.memtrace.analysis.Interpretation;
import org.memtrace.cache.CacheGeometry;
import org.memtrace.cache.CacheHierarchy;
import org.memtrace.cache.Policy;
import org.memtrace.heap.SymbolicNaming;
import org.memtrace.io.IoReason;
import org.memtrace.launch.LaunchException;
import org.memtrace.report.Report;
import org.memtrace.trace.InstructionShapes;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code memtrace report}: one self-contained HTML page about a trace. */
@Command(name = "report", mixinStandardHelpOptions = true,
        description = {"Writes one self-contained HTML page about a trace.",
                "The page holds the summary, the page heat map, per-object time x offset heat maps, the hottest objects and instructions, allocation sites and every access to freed memory.",
                "`memtrace run --report FILE` writes it live. See docs/report.md."},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:the report is complete", "1:the trace is damaged or cut short (the report covers what precedes the damage and says so), or the report could not be written",
                "2:usage error (bad option, no such trace file, a file that is not a trace, unwritable output)"})
final class ReportCommand implements Callable<Integer> {
    @Spec CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "TRACE", description = "A .mtr file (a program built with memtrace cc) or a saved event stream (memtrace run --save-stream).")
    Path trace;

    @Option(names = "--no-demangle", description = "Keep C++ names as the symbol tables spell them (_ZN2ns3Box3putEi), not ns::Box::put(int).")
    boolean noDemangle;

    @Option(names = {"-o", "--output"}, paramLabel = "FILE", defaultValue = "report.html",
            description = "The HTML file to write ('-' for standard output; default: ${DEFAULT-VALUE}).")
    Path output;

    @Option(names = "--top", paramLabel = "N", defaultValue = "50",
            description = "Rows per table: objects, instructions, allocation sites (default: ${DEFAULT-VALUE}).")
    int top;

    @Option(names = "--heat-maps", paramLabel = "N", defaultValue = "12",
            description = "Per-object heat maps, for the hottest objects (default: ${DEFAULT-VALUE}).")
    int heatMaps;

    /** cachegrind's D1 and a last level; {@code run --report} simulates these. */
    static final String DEFAULT_CACHES = "32k:8:64,8m:16:64";

    @Option(names = "--caches", paramLabel = "L1[,L2[,L3]]", defaultValue = DEFAULT_CACHES,
            description = "Cache levels simulated (SIZE:WAYS:LINE each, LRU) for the misses per source line and the annotated source, "
                    + "or 'none' (default: ${DEFAULT-VALUE}, cachegrind's D1 and a last level).")
    String caches;

    @Option(names = "--source-dir", paramLabel = "DIR", description = "Look up source paths that are relative (to the compilation directory) "
            + "in DIR first, for the annotated source; may be repeated (cg_annotate's -I).")
    List<Path> sourceDirs = new ArrayList<>();

    @Override
    public Integer call() throws LaunchException {
        if (top < 0 || heatMaps < 0) throw new CommandLine.ParameterException(spec.commandLine(), "--top and --heat-maps must not be negative");
        CacheHierarchy hierarchy = hierarchy();
        boolean compiledIn = TraceInput.compiledIn(trace);
        try (OutputFile file = OutputFile.create(output, List.of(trace))) {
            SymbolicNaming naming = new SymbolicNaming();
            if (noDemangle) naming.addressSpace().keepRawNames();
            InstructionShapes shapes = compiledIn ? InstructionShapes.UNKNOWN
                    : TraceInput.shapes(naming.addressSpace(), spec.commandLine().getErr());
            // the page is written to the temporary file and named (or copied to standard output) here
            Report report = new Report(naming, compiledIn).writeTo(file.temporary(), null, file.shown(), top, heatMaps);
            if (hierarchy != null) report.simulate(hierarchy, sourceDirs);
            Interpretation stage = new Interpretation(naming, shapes, List.of(report));
            TraceInput.Outcome o = TraceInput.replay(trace, stage,
                    Progress.onTerminal(spec.commandLine().getErr(), "report"));
            report.fact("trace file", trace.toString());
            // a report of a damaged trace says so on the page, not only on the terminal
            if (!o.problems().isEmpty()) report.fact("incomplete", String.join("; ", o.problems()));
            List<String> problems = stage.finish(Ending.offline(o.events(), stage.events(), o.lost(), o.declinedLoops()));
            if (!problems.isEmpty()) throw LaunchException.environment(String.join("; ", problems), null);
            file.commit();
            return TraceInput.reportProblems(trace, o, spec.commandLine().getErr());
        } catch (IOException e) {
            throw LaunchException.environment("cannot write " + output + ": " + IoReason.of(e), e);
        }
    }

    private CacheHierarchy hierarchy() {
        try {
            return hierarchy(caches);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--caches: " + e.getMessage());
        }
    }

    /** The levels {@code spec} lists (as {@code --caches}), or null for {@code none}. */
    static CacheHierarchy hierarchy(String spec) {
        if (spec.equals("none")) return null;
        List<CacheGeometry> levels = new ArrayList<>();
        for (String level : spec.split(",", -1)) levels.add(CacheGeometry.parse(level));
        if (levels.size() > 3) throw new IllegalArgumentException("at most three levels, not " + levels.size());
        return new CacheHierarchy(levels, Policy.LRU, 1);
    }
}
