package org.memtrace.cli;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.memtrace.analysis.Analysis;
import org.memtrace.analysis.Ending;
import org.memtrace.analysis.Interpretation;
import org.memtrace.export.ExportFormat;
import org.memtrace.export.ParquetRows;
import org.memtrace.export.SimulatorText;
import org.memtrace.export.TraceRows;
import org.memtrace.heap.SymbolicNaming;
import org.memtrace.launch.LaunchException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code memtrace convert}: the trace's data accesses in the formats other tools read. */
@Command(name = "convert", mixinStandardHelpOptions = true,
        description = {"Writes a trace's data accesses for other tools: Lackey, pinatrace, din, xdin, CSV or Parquet.",
                "Valgrind Lackey's --trace-mem text, Pin's pinatrace, Dinero's din, CSV with a header, Parquet for",
                "DuckDB, Spark or pandas. See docs/convert.md."},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:the output is complete", "1:the trace is damaged or cut short (what precedes the damage is written), or the output could not be written",
                "2:usage error (bad option, no such trace file, a file that is not a trace, unwritable output)"})
final class ConvertCommand implements Callable<Integer> {
    @Spec CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "TRACE", description = "A .mtr file (a program built with memtrace cc) or a saved event stream (memtrace run --save-stream).")
    Path trace;

    @Option(names = "--no-demangle", description = "Keep C++ names as the symbol tables spell them (_ZN2ns3Box3putEi), not ns::Box::put(int).")
    boolean noDemangle;

    @Option(names = "--to", required = true, paramLabel = "FORMAT",
            description = "lackey, pinatrace, din, xdin (Dinero IV's extended din), csv or parquet.", converter = FormatName.class)
    ExportFormat format;

    @Option(names = {"-o", "--output"}, required = true, paramLabel = "FILE", description = "The file to write ('-' for standard output).")
    Path output;

    /** A format as users type it; the error lists the names in that form too. */
    static final class FormatName implements CommandLine.ITypeConverter<ExportFormat> {
        @Override
        public ExportFormat convert(String name) {
            for (ExportFormat f : ExportFormat.values()) if (f.name().equalsIgnoreCase(name)) return f;
            throw new CommandLine.TypeConversionException("unknown format '" + name + "' (use lackey, pinatrace, din, xdin, csv or parquet)");
        }
    }

    @Override
    public Integer call() throws LaunchException {
        PrintWriter err = spec.commandLine().getErr();
        // Check the input before creating anything beside the output.
        if (!Files.isRegularFile(trace)) throw LaunchException.usage("no trace file " + trace);
        TraceInput.Outcome read;
        try (OutputFile out = OutputFile.create(output, List.of(trace))) {
            Progress progress = Progress.onTerminal(err, "convert to " + format.name().toLowerCase(Locale.ROOT));
            try {
                read = write(out, err, progress);
                out.commit();
            } finally {
                progress.end();
            }
        } catch (IOException | UncheckedIOException e) {
            throw LaunchException.environment("cannot write " + output + ": " + Main.oneLine(e.getMessage()), e);
        }
        // a damaged trace's accesses before the damage are written, and the damage said
        return TraceInput.reportProblems(trace, read, err);
    }

    private TraceInput.Outcome write(OutputFile file, PrintWriter err, Progress progress) throws LaunchException, IOException {
        SymbolicNaming naming = new SymbolicNaming();
        if (noDemangle) naming.addressSpace().keepRawNames();
        try (OutputStream stream = new BufferedOutputStream(file.open(), 1 << 16)) {
            Analysis export = switch (format) {
                case LACKEY, PINATRACE, DIN, XDIN -> new SimulatorText(format, stream);
                case CSV -> new TraceRows(naming, stream);
                case PARQUET -> new ParquetRows(naming, stream);
            };
            Interpretation stage = new Interpretation(naming, TraceInput.shapes(naming.addressSpace(), err), List.of(export));
            TraceInput.Outcome read = TraceInput.replay(trace, stage, progress);
            // the exports write to the stream opened here: their failures are the reason, the file is ours to name
            List<String> problems = stage.finish(Ending.offline(read.events(), stage.events(), 0, Map.of()));
            if (!problems.isEmpty()) throw new IOException(problems.getFirst());
            return read;
        }
    }
}
