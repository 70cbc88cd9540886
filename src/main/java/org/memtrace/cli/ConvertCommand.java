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
import java.util.function.Supplier;
import org.memtrace.analysis.Analysis;
import org.memtrace.analysis.Ending;
import org.memtrace.analysis.Interpretation;
import org.memtrace.export.Drmemtrace;
import org.memtrace.export.ExportFormat;
import org.memtrace.export.ParquetDataset;
import org.memtrace.export.ParquetRows;
import org.memtrace.export.SimulatorText;
import org.memtrace.export.TraceRows;
import org.memtrace.heap.SymbolicNaming;
import org.memtrace.trace.DecodedShapes;
import org.memtrace.trace.InstructionShapes;
import org.memtrace.launch.LaunchException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code memtrace convert}: the trace's data accesses in the formats other tools read. */
@Command(name = "convert", mixinStandardHelpOptions = true,
        description = {"Writes a trace's data accesses for other tools: Lackey, pinatrace, din, xdin, CSV, Parquet or drmemtrace.",
                "Valgrind Lackey's --trace-mem text, Pin's pinatrace, Dinero's din, CSV with a header, Parquet for DuckDB, Spark or pandas (one file, or a dataset per thread), DynamoRIO's drmemtrace directory for drcachesim -indir. See docs/convert.md."},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:the output is complete", "1:the trace is damaged or cut short (what precedes the damage is written), or the output could not be written",
                "2:usage error (bad option, no such trace file, a file that is not a trace, unwritable output)",
                "141:the output was a pipe whose reader stopped reading (-o - | head): reading stopped there, quietly"})
final class ConvertCommand implements Callable<Integer> {
    @Spec CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "TRACE", description = "A .mtr file (a program built with memtrace cc) or a saved event stream (memtrace run --save-stream).")
    Path trace;

    @Option(names = "--no-demangle", description = "Keep C++ names as the symbol tables spell them (_ZN2ns3Box3putEi), not ns::Box::put(int).")
    boolean noDemangle;

    @Option(names = "--to", required = true, paramLabel = "FORMAT",
            description = "lackey, pinatrace, din, xdin (Dinero IV's extended din), csv, parquet or drmemtrace (a directory for drcachesim -indir).", converter = FormatName.class)
    ExportFormat format;

    @Option(names = {"-o", "--output"}, required = true, paramLabel = "FILE", description = "The file to write ('-' for standard output).")
    Path output;

    @Option(names = "--partition-by", paramLabel = "thread",
            description = "Parquet only: write a Hive-style dataset, a directory OUT/thread=TID/part-NNNNN.parquet per thread (OUT must not exist).",
            converter = PartitionName.class)
    PartitionKey partitionBy;

    @Option(names = "--max-rows-per-file", paramLabel = "N",
            description = "Parquet only: write a dataset whose files hold at most N rows each (OUT/part-NNNNN.parquet, or per thread with --partition-by).")
    Long maxRowsPerFile;

    /** What a dataset's directories split the rows by. */
    enum PartitionKey { THREAD }

    /** The partition keys as users type them; the error names them. */
    static final class PartitionName implements CommandLine.ITypeConverter<PartitionKey> {
        @Override
        public PartitionKey convert(String name) {
            if (name.equalsIgnoreCase("thread")) return PartitionKey.THREAD;
            throw new CommandLine.TypeConversionException("cannot partition by '" + name + "' (use thread)");
        }
    }

    /** A format as users type it; the error lists the names in that form too. */
    static final class FormatName implements CommandLine.ITypeConverter<ExportFormat> {
        @Override
        public ExportFormat convert(String name) {
            for (ExportFormat f : ExportFormat.values()) if (f.name().equalsIgnoreCase(name)) return f;
            throw new CommandLine.TypeConversionException("unknown format '" + name + "' (use lackey, pinatrace, din, xdin, csv, parquet or drmemtrace)");
        }
    }

    @Override
    public Integer call() throws LaunchException {
        PrintWriter err = spec.commandLine().getErr();
        // Check the input before creating anything beside the output.
        TraceInput.requireFile(trace);
        if (partitionBy != null || maxRowsPerFile != null) return dataset(err);
        if (format == ExportFormat.DRMEMTRACE) return drmemtrace(err);
        TraceInput.Outcome read;
        try (OutputFile out = OutputFile.create(output, List.of(trace))) {
            Progress progress = Progress.onTerminal(err, "convert to " + format.name().toLowerCase(Locale.ROOT));
            try {
                read = write(out, err, progress);
                out.commit();
            } catch (TraceInput.ReaderGone gone) {
                return TraceInput.READER_GONE;
            } catch (IOException | UncheckedIOException e) {
                // a Parquet file copied to a pipe that closed: as a C tool killed by SIGPIPE
                if (out.readerGone()) return TraceInput.READER_GONE;
                throw e;
            } finally {
                progress.end();
            }
        } catch (IOException | UncheckedIOException e) {
            throw LaunchException.environment("cannot write " + output + ": " + Main.oneLine(e.getMessage()), e);
        }
        // a damaged trace's accesses before the damage are written, and the damage said
        return TraceInput.reportProblems(trace, read, err);
    }

    private TraceInput.Outcome write(OutputFile file, PrintWriter err, Progress progress)
            throws LaunchException, IOException, TraceInput.ReaderGone {
        SymbolicNaming naming = naming();
        try (OutputStream stream = new BufferedOutputStream(file.open(), 1 << 16)) {
            Analysis export = switch (format) {
                case LACKEY, PINATRACE, DIN, XDIN -> new SimulatorText(format, stream);
                case CSV -> new TraceRows(naming, stream);
                case PARQUET -> new ParquetRows(naming, stream);
                case DRMEMTRACE -> throw new AssertionError("a directory, written by drmemtrace()");
            };
            Interpretation stage = new Interpretation(naming, TraceInput.shapes(naming.addressSpace(), err), List.of(export));
            // standard output's reader gone ({@code | head}): stop reading
            TraceInput.Outcome read = TraceInput.replay(trace, stage, progress, file::readerGone);
            if (export instanceof ParquetRows parquet) parquet.metadata(() -> ParquetMetadata.of(trace, naming, read));
            return finish(stage, read);
        }
    }

    private SymbolicNaming naming() {
        SymbolicNaming naming = new SymbolicNaming();
        if (noDemangle) naming.addressSpace().keepRawNames();
        return naming;
    }

    /** Ends the exports, whose failures are the reason the output failed (the output is ours to name). */
    private static TraceInput.Outcome finish(Interpretation stage, TraceInput.Outcome read) throws IOException {
        List<String> problems = stage.finish(Ending.offline(read.events(), stage.events(), 0, Map.of()));
        if (!problems.isEmpty()) throw new IOException(problems.getFirst());
        return read;
    }

    /** {@code --to drmemtrace}: a directory with a gzip file per thread under trace/, for {@code drcachesim -indir}. */
    private int drmemtrace(PrintWriter err) throws LaunchException {
        return intoDirectory(err, "the drmemtrace export", "convert to drmemtrace", (naming, shapes, out, outcome) ->
                new Drmemtrace(out::create, shapes instanceof DecodedShapes decoded ? new DecodedCode(decoded) : ip -> 0));
    }

    /** An export that writes files into a directory; {@code outcome} is the reading's, once the trace is read. */
    @FunctionalInterface
    private interface DirectoryExport {
        Analysis make(SymbolicNaming naming, InstructionShapes shapes, OutputDirectory out, Supplier<TraceInput.Outcome> outcome);
    }

    /**
     * Reads the trace into the export {@code export} makes, in a directory built under a temporary name and
     * renamed once whole ({@code described} names it in messages, {@code label} in the progress line).
     */
    private int intoDirectory(PrintWriter err, String described, String label, DirectoryExport export) throws LaunchException {
        TraceInput.Outcome read;
        try (OutputDirectory out = OutputDirectory.create(output, List.of(trace), described)) {
            Progress progress = Progress.onTerminal(err, label);
            try {
                SymbolicNaming naming = naming();
                InstructionShapes shapes = TraceInput.shapes(naming.addressSpace(), err);
                TraceInput.Outcome[] done = new TraceInput.Outcome[1];
                Interpretation stage = new Interpretation(naming, shapes, List.of(export.make(naming, shapes, out, () -> done[0])));
                done[0] = TraceInput.replay(trace, stage, progress);
                read = finish(stage, done[0]);
                out.commit();
            } finally {
                progress.end();
            }
        } catch (IOException | UncheckedIOException e) {
            throw LaunchException.environment("cannot write " + output + ": " + Main.oneLine(e.getMessage()), e);
        }
        return TraceInput.reportProblems(trace, read, err);
    }

    /** The drmemtrace export's view of the decoder: lengths, and drmemtrace's branch types. */
    private record DecodedCode(DecodedShapes decoded) implements Drmemtrace.Code {
        @Override
        public int lengthOf(long ip) { return decoded.lengthOf(ip); }

        @Override
        public int typeOf(long ip) {
            return switch (decoded.flowOf(ip)) {
                case CALL -> decoded.direct(ip) ? 14 : 15;     // TRACE_TYPE_INSTR_DIRECT_CALL, _INDIRECT_CALL
                case JUMP -> decoded.direct(ip) ? 11 : 12;     // TRACE_TYPE_INSTR_DIRECT_JUMP, _INDIRECT_JUMP
                case RETURN -> 16;                             // TRACE_TYPE_INSTR_RETURN
                // a conditional jump never accesses memory; the kernel's entries and traps are plain instructions
                default -> 10;                                 // TRACE_TYPE_INSTR
            };
        }
    }

    /** {@code --partition-by} or {@code --max-rows-per-file}: a directory of Parquet files. */
    private int dataset(PrintWriter err) throws LaunchException {
        if (format != ExportFormat.PARQUET)
            throw LaunchException.usage("--partition-by and --max-rows-per-file write Parquet datasets: use them with --to parquet");
        if (maxRowsPerFile != null && maxRowsPerFile <= 0)
            throw LaunchException.usage("--max-rows-per-file must be a positive number of rows, not " + maxRowsPerFile);
        ParquetDataset.Partitioning partitioning = new ParquetDataset.Partitioning(partitionBy != null,
                maxRowsPerFile != null ? maxRowsPerFile : Long.MAX_VALUE);
        return intoDirectory(err, "a partitioned dataset", "convert to parquet", (naming, shapes, out, outcome) -> {
            ParquetDataset dataset = new ParquetDataset(naming, out::create, partitioning);
            // a file that reaches the row limit closes while the trace is read: it says nothing of the end
            dataset.metadata(() -> ParquetMetadata.of(trace, naming, outcome.get()));
            return dataset;
        });
    }
}
