package org.memtrace.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.memtrace.analysis.Ending;
import org.memtrace.analysis.Interpretation;
import org.memtrace.analysis.Summary;
import org.memtrace.heap.SymbolicNaming;
import org.memtrace.io.IoReason;
import org.memtrace.launch.LaunchException;
import org.memtrace.madt.AddressMode;
import org.memtrace.madt.MadtWriter;
import org.memtrace.event.Event;
import org.memtrace.trace.Guarded;
import org.memtrace.trace.InstructionShapes;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code memtrace print}: a recorded trace as MadT text, through the same writer and summary as
 * {@code memtrace run}. Reads a {@code .mtr} file (a program built with memtrace cc) or an event stream
 * saved by {@code memtrace run --save-stream}, told apart by their magic. Symbols come from the files
 * the trace names, as they are now on this machine.
 */
@Command(name = "print", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Prints a .mtr file or a saved event stream as a MadT trace.",
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:the whole trace was printed",
                "1:the trace is incomplete or damaged (what could be read was printed), or the output could not be written",
                "2:usage error, or FILE is not a trace",
                "141:the output was a pipe whose reader stopped reading (as with | head): reading stopped there, quietly"})
final class PrintCommand implements java.util.concurrent.Callable<Integer> {
    @Spec CommandLine.Model.CommandSpec spec;

    @Option(names = "--no-demangle", description = "Keep C++ names as the symbol tables spell them (_ZN2ns3Box3putEi), not ns::Box::put(int).")
    boolean noDemangle;

    @Option(names = {"-o", "--output"}, paramLabel = "OUT", defaultValue = "-",
            description = "Trace text file ('-' for standard output; default: ${DEFAULT-VALUE}).")
    String output;

    @Option(names = "--addresses", paramLabel = "MODE", defaultValue = "symbolic",
            description = "raw (#), symbolic ($) or both lines per event (default: ${DEFAULT-VALUE}).")
    AddressMode addresses;

    @Option(names = {"-q", "--quiet"}, description = "Do not print the summary at the end.")
    boolean quiet;

    @Parameters(index = "0", paramLabel = "FILE", description = "A .mtr file or a stream saved by memtrace run --save-stream.")
    Path file;

    private final List<String> problems = new ArrayList<>();

    @Override
    public Integer call() throws LaunchException {
        PrintWriter err = spec.commandLine().getErr();
        boolean compiledIn = TraceInput.compiledIn(file);
        if (output.isEmpty()) throw LaunchException.usage("-o: an empty file name; name a file, or - for standard output");
        try (OutputFile target = OutputFile.create(RawPaths.path(output), List.of(file))) {
            OutputStream out = open(target);
            SymbolicNaming names = new SymbolicNaming();
            if (noDemangle) names.addressSpace().keepRawNames();
            InstructionShapes shapes = compiledIn ? InstructionShapes.UNKNOWN : TraceInput.shapes(names.addressSpace(), err);
            // the text's bytes on a second thread where there is a second processor (MadtWriter: measured for print)
            MadtWriter text = new MadtWriter(out, addresses, names, problems::add, Runtime.getRuntime().availableProcessors() > 1);
            Interpretation stage = new Interpretation(names, shapes, List.of(text, new Summary(compiledIn).printTo(quiet ? null : err)));
            Guarded guarded = new Guarded(stage, problems::add, "the trace stops here");

            TraceInput.Outcome read;
            try {
                // the progress line would land in the text itself when that goes to the terminal
                Progress progress = output.equals("-") ? Progress.none() : Progress.onTerminal(err, "print");
                read = TraceInput.replay(file, guarded, progress, target::readerGone);
            } catch (TraceInput.ReaderGone gone) {
                // as a C tool killed by SIGPIPE: nothing more to print, nothing to say, the shell's status
                return TraceInput.READER_GONE;
            } catch (LaunchException | RuntimeException e) {
                try {
                    out.close();
                } catch (IOException closing) {
                    e.addSuppressed(closing);
                }
                throw e;
            }
            problems.addAll(stage.finish(Ending.offline(read.events(), stage.events(), read.lost(), read.declinedLoops())));
            problems.addAll(read.problems());
            // what a damaged trace held before the damage is printed (and said to be incomplete); a text
            // that could not be written whole gets no name
            if (text.complete()) commit(target);
            if (read.lost() > 0)
                RunCommand.say(err, read.lost() + (compiledIn ? " records were dropped by the program's runtime" : " events were lost by the agent"));
            problems.forEach(p -> RunCommand.say(err, p));
            return problems.isEmpty() && stage.complete() ? 0 : TraceInput.DAMAGED;
        }
    }

    private static OutputStream open(OutputFile target) throws LaunchException {
        try {
            return target.open();
        } catch (IOException e) {
            throw LaunchException.usage("cannot write " + target.shown() + ": " + IoReason.of(e));
        }
    }

    private void commit(OutputFile target) {
        try {
            target.commit();
        } catch (IOException e) {
            problems.add("cannot write " + target.shown() + ": " + IoReason.of(e));
        }
    }
}
