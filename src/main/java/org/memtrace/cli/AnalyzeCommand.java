package org.memtrace.cli;

import org.memtrace.instrument.CcOptions;
import org.memtrace.instrument.OptionWords;
import org.memtrace.launch.LaunchException;
import org.memtrace.mtr.CcBuild;
import org.memtrace.mtr.MtrFormatException;
import org.memtrace.select.AnalysisOptions;
import org.memtrace.select.BinaryAnalyzer;
import org.memtrace.select.BuildCheck;
import org.memtrace.select.ElfText;
import org.memtrace.select.FunctionModel;
import org.memtrace.select.FunctionSymbol;
import org.memtrace.select.JsonReport;
import org.memtrace.select.ScoreTriplet;
import org.memtrace.select.AnalysisSummary;
import org.memtrace.select.TextReport;
import org.memtrace.symbols.ElfFile;
import org.memtrace.x86.ZydisUnavailableException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.NavigableSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;

/** {@code memtrace analyze}: which memory instructions of a binary to instrument, and the accuracy that buys. */
@Command(name = "analyze", mixinStandardHelpOptions = true,
        description = {"Selects the memory instructions of a binary to instrument and reports the accuracy that buys.",
                "Per basic block (selective instrumentation, BID model); the accuracy is the minimal (MA) and the alignment-independent (AIA) one."})
public final class AnalyzeCommand implements Callable<Integer> {

    @Option(names = "--omega", defaultValue = "0.25", paramLabel = "W[,W...]",
            description = "cost-controlling parameter(s) in [0,1]; a list prints the accuracy curve (default ${DEFAULT-VALUE}; "
                    + "for a file built by memtrace cc, the build's, as for --chunk, --scores and --stack)")
    String omega;

    @Option(names = "--chunk", defaultValue = "4096", paramLabel = "BYTES",
            description = "chunk size C, the tracing granularity (default ${DEFAULT-VALUE})")
    long chunk;

    @Option(names = "--scores", defaultValue = "1,2,4", paramLabel = "S1,S2,S3",
            description = "score triplet with s1<s2<s3 and s1+s2<s3 (default ${DEFAULT-VALUE})")
    String scores;

    @Option(names = "--function", paramLabel = "NAME", description = "show every block of this function")
    String function;

    @Option(names = "--json", description = "write the selection as JSON instead of text")
    boolean json;

    @Option(names = "--stack", description = "count stack accesses (through rsp/rbp, push/pop/call/ret) as memory references")
    boolean stack;

    @Parameters(index = "0", paramLabel = "FILE", description = "ELF executable, shared library or relocatable object")
    Path file;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws LaunchException {
        PrintWriter out = spec.commandLine().getOut();
        try {
            ElfFile image = ElfText.open(file);
            ElfText elf = ElfText.of(image);
            Optional<CcBuild> cc = CcBuild.of(image, image.section(".text").orElseThrow());
            Optional<CcOptions> recorded = cc.flatMap(AnalyzeCommand::recordedOptions);
            recorded.ifPresent(this::defaultTo);
            List<Double> omegas = parseOmegas(omega);
            AnalysisOptions options = new AnalysisOptions(positiveChunk(chunk), parseScores(scores), stack);
            List<FunctionSymbol> functions = function == null ? elf.functions()
                    : elf.functions().stream().filter(f -> f.name().equals(function)).toList();
            if (function != null) {
                if (functions.isEmpty()) {
                    throw new IllegalArgumentException("no function " + function + " in " + file);
                }
            }
            NavigableSet<Long> sites = cc.map(CcBuild::sites).orElse(Collections.emptyNavigableSet());
            List<FunctionModel> models = new BinaryAnalyzer(options).analyze(elf, functions, sites);
            Optional<BuildCheck> check = cc.map(b -> check(b, recorded, options, omegas, models, elf.places().fromSymbolTable()));
            if (json) {
                JsonReport.write(out, elf, options, models, omegas, check);
                out.println();
            } else {
                report(new TextReport(out), elf, options, models, omegas, check);
            }
            out.flush();
            return 0;
        } catch (IOException | IllegalArgumentException e) {
            // a missing or unreadable file, one that is no ELF file, a bad option value: input errors, as in every command
            throw LaunchException.usage(message(e));
        } catch (ZydisUnavailableException | MtrFormatException e) {
            throw LaunchException.environment(message(e), e);
        }
    }

    private static String message(Exception e) {
        String message = e.getMessage() == null ? e.toString() : e.getMessage();
        return message.startsWith("memtrace: ") ? message.substring("memtrace: ".length()) : message;
    }

    /** The options a cc-built file records, when it records one set that this version reads. */
    private static Optional<CcOptions> recordedOptions(CcBuild build) {
        if (build.options().size() != 1) {
            return Optional.empty();
        }
        List<String> words = OptionWords.split(build.options().getFirst());
        if (words.size() < 2 || !words.get(0).equals("memtrace") || !words.get(1).equals("cc")) {
            return Optional.empty();
        }
        try {
            return Optional.of(CcOptions.parse(words.subList(2, words.size())));
        } catch (IllegalArgumentException e) {
            return Optional.empty(); // written by another version: shown, not used
        }
    }

    /** The build's selection options stand in for every one the command line leaves out. */
    private void defaultTo(CcOptions build) {
        ParseResult given = spec.commandLine().getParseResult();
        if (!given.hasMatchedOption("--omega")) omega = Double.toString(build.omega());
        if (!given.hasMatchedOption("--chunk")) chunk = build.chunk();
        if (!given.hasMatchedOption("--scores")) {
            scores = build.scores().s1() + "," + build.scores().s2() + "," + build.scores().s3();
        }
        if (!given.hasMatchedOption("--stack")) stack = build.stack();
    }

    /**
     * The build's probes against the selection, over the functions that have probes: a function with memory
     * references but no probe was not compiled by memtrace cc (crt1.o's {@code _start}) or was left whole.
     */
    private static BuildCheck check(CcBuild build, Optional<CcOptions> recorded, AnalysisOptions options,
                                    List<Double> omegas, List<FunctionModel> models, boolean symbolTable) {
        Set<Long> instrumented = new HashSet<>();
        List<FunctionModel> probed = new ArrayList<>();
        int sites = 0, unprobed = 0;
        for (FunctionModel m : models) {
            FunctionSymbol f = m.function();
            int here = build.sites().subSet(f.address(), f.end()).size();
            if (here == 0) {
                if (m.blocks().stream().anyMatch(b -> !b.references().isEmpty())) unprobed++;
                continue;
            }
            sites += here;
            probed.add(m);
            instrumented.addAll(build.instructions().subSet(f.address(), f.end()));
        }
        String why = null;
        if (recorded.isEmpty()) why = build.options().isEmpty() ? "the build did not record its options" : "the build's options are not one set this version reads";
        else if (!symbolTable) why = "the file is stripped: without its symbol table the build's functions and static places cannot be found";
        else if (build.skeleton()) why = "skeleton loops record their computed accesses without sites";
        else if (omegas.size() != 1 || omegas.getFirst() != recorded.get().omega() || !options.equals(recorded.get().analysis()))
            why = "the analysis options are not the build's";
        Optional<BuildCheck.Difference> difference = why != null ? Optional.empty()
                : Optional.of(BuildCheck.compare(probed, omegas.getFirst(), recorded.get().selective(), instrumented));
        return new BuildCheck(build.options(), sites, instrumented.size(), unprobed, difference,
                why == null ? "" : why);
    }

    private void report(TextReport text, ElfText elf, AnalysisOptions options, List<FunctionModel> models,
                        List<Double> omegas, Optional<BuildCheck> check) {
        text.header(elf, options);
        check.ifPresent(text::build);
        List<AnalysisSummary> points = new ArrayList<>();
        for (double w : omegas) {
            AnalysisSummary s = AnalysisSummary.of(models, w);
            points.add(s);
            text.summary(s);
        }
        if (omegas.size() > 1) {
            text.sweep(points);
        }
        double first = omegas.getFirst();
        if (function != null) {
            models.forEach(m -> text.functionDetail(m, first));
        } else {
            text.functionTable(models, first);
        }
        text.flush();
    }

    static List<Double> parseOmegas(String text) {
        var result = new ArrayList<Double>();
        for (String part : text.split(",", -1)) {
            double w;
            try {
                w = Double.parseDouble(part.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad --omega value '" + part.trim() + "': expected numbers in [0,1] separated by commas");
            }
            if (!(w >= 0 && w <= 1)) {
                throw new IllegalArgumentException("bad --omega value " + part.trim() + ": omega must be in [0,1]");
            }
            result.add(w);
        }
        return result;
    }

    static ScoreTriplet parseScores(String text) {
        String[] parts = text.split(",", -1);
        try {
            if (parts.length != 3) {
                throw new NumberFormatException();
            }
            return new ScoreTriplet(Integer.parseInt(parts[0].trim()), Integer.parseInt(parts[1].trim()),
                    Integer.parseInt(parts[2].trim()));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad --scores '" + text + "': expected three integers s1,s2,s3");
        }
    }

    private static long positiveChunk(long c) {
        if (c <= 0) {
            throw new IllegalArgumentException("bad --chunk " + c + ": the chunk size must be positive");
        }
        return c;
    }
}
