package org.memtrace.cli;

import org.memtrace.select.AnalysisOptions;
import org.memtrace.select.BinaryAnalyzer;
import org.memtrace.select.ElfText;
import org.memtrace.select.FunctionModel;
import org.memtrace.select.FunctionSymbol;
import org.memtrace.select.JsonReport;
import org.memtrace.select.ScoreTriplet;
import org.memtrace.select.AnalysisSummary;
import org.memtrace.select.TextReport;
import org.memtrace.x86.ZydisUnavailableException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code memtrace analyze}: which memory instructions of a binary to instrument, and the accuracy that buys. */
@Command(name = "analyze", mixinStandardHelpOptions = true,
        description = "Select the memory-referencing instructions to instrument per basic block (selective "
                + "instrumentation, BID model) and report the minimal (MA) and alignment-independent (AIA) accuracy.")
public final class AnalyzeCommand implements Callable<Integer> {

    @Option(names = "--omega", defaultValue = "0.25", paramLabel = "W[,W...]",
            description = "cost-controlling parameter(s) in [0,1]; a list prints the accuracy curve (default ${DEFAULT-VALUE})")
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
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            List<Double> omegas = parseOmegas(omega);
            AnalysisOptions options = new AnalysisOptions(positiveChunk(chunk), parseScores(scores), stack);
            ElfText elf = ElfText.read(file);
            List<FunctionSymbol> functions = elf.functions();
            if (function != null) {
                functions = functions.stream().filter(f -> f.name().equals(function)).toList();
                if (functions.isEmpty()) {
                    throw new IllegalArgumentException("no function " + function + " in " + file);
                }
            }
            List<FunctionModel> models = new BinaryAnalyzer(options).analyze(elf, functions);
            if (json) {
                JsonReport.write(out, elf, options, models, omegas);
                out.println();
            } else {
                report(new TextReport(out), elf, options, models, omegas);
            }
            out.flush();
            return 0;
        } catch (IOException | IllegalArgumentException | ZydisUnavailableException e) {
            String message = e.getMessage() == null ? e.toString() : e.getMessage();
            err.println(message.startsWith("memtrace: ") ? message : "memtrace: " + message);
            err.flush();
            return 1;
        }
    }

    private void report(TextReport text, ElfText elf, AnalysisOptions options, List<FunctionModel> models,
                        List<Double> omegas) {
        text.header(elf, options);
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
