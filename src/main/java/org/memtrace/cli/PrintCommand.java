package org.memtrace.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.memtrace.analysis.Summary;
import org.memtrace.event.Event;
import org.memtrace.event.SavedStream;
import org.memtrace.event.StreamFormatException;
import org.memtrace.event.StreamLayout;
import org.memtrace.heap.SymbolicNaming;
import org.memtrace.launch.LaunchException;
import org.memtrace.mtr.MtrFile;
import org.memtrace.mtr.MtrFormatException;
import org.memtrace.mtr.MtrReader;
import org.memtrace.trace.AddressMode;
import org.memtrace.trace.EventConsumer;
import org.memtrace.trace.InstructionShapes;
import org.memtrace.trace.MadtWriter;
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
                "2:usage error, or FILE is not a trace"})
final class PrintCommand implements java.util.concurrent.Callable<Integer> {
    @Spec CommandLine.Model.CommandSpec spec;

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
    private List<EventConsumer> consumers;
    private boolean dispatching = true;

    @Override
    public Integer call() throws LaunchException {
        PrintWriter err = spec.commandLine().getErr();
        boolean compiledIn = isMtr();
        Writer out = RunCommand.openOutput(output);
        SymbolicNaming names = new SymbolicNaming();
        InstructionShapes shapes = compiledIn ? InstructionShapes.UNKNOWN : RunCommand.decodedShapes(names.addressSpace());
        MadtWriter writer = new MadtWriter(out, addresses, names, shapes, problems::add);
        Summary summary = compiledIn ? Summary.ofProbes() : new Summary(shapes);
        consumers = List.of(writer, summary);

        long lost = compiledIn ? readMtr() : readStream();
        writer.finish();
        if (!quiet) summary.print(err, lost, null);
        if (lost > 0)
            RunCommand.say(err, lost + (compiledIn ? " records were dropped by the program's runtime" : " events were lost by the agent"));
        problems.forEach(p -> RunCommand.say(err, p));
        return problems.isEmpty() && !writer.failed() ? 0 : 1;
    }

    /** Tells the two kinds of trace apart by their first eight bytes. */
    private boolean isMtr() throws LaunchException {
        byte[] head;
        try (InputStream in = Files.newInputStream(file)) {
            head = in.readNBytes(8);
        } catch (IOException e) {
            throw LaunchException.usage("cannot read " + file + ": " + LaunchException.reason(e));
        }
        if (MtrFile.hasMagic(head)) return true;
        long magic = 0;
        for (int i = head.length - 1; i >= 0; i--) magic = magic << 8 | (head[i] & 0xff);
        if (head.length == 8 && magic == StreamLayout.MAGIC) return false;
        throw LaunchException.usage(file + " is neither a .mtr file nor an event stream saved by memtrace run");
    }

    private long readMtr() throws LaunchException {
        try (MtrFile mtr = MtrFile.open(file)) {
            MtrReader.Result r = MtrReader.read(mtr, this::dispatch);
            problems.addAll(r.problems());
            return r.dropped();
        } catch (MtrFormatException e) {
            throw LaunchException.environment(file + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw LaunchException.environment("cannot read " + file + ": " + LaunchException.reason(e), e);
        }
    }

    /** A damaged stream still prints what came before the damage. */
    private long readStream() throws LaunchException {
        try {
            SavedStream.Summary s = SavedStream.replay(file, this::dispatch);
            if (!s.done()) problems.add("the stream has no end mark: the recording was cut short; it holds what was saved before");
            return s.lost();
        } catch (StreamFormatException e) {
            problems.add(file + ": " + e.getMessage() + "; the rest of the stream is ignored");
            return 0;
        } catch (IOException e) {
            throw LaunchException.environment("cannot read " + file + ": " + LaunchException.reason(e), e);
        }
    }

    private void dispatch(Event event) {
        if (!dispatching) return;
        for (EventConsumer c : consumers) {
            try {
                c.accept(event);
            } catch (RuntimeException e) {
                dispatching = false;
                problems.add("internal error in " + c.getClass().getSimpleName() + " (" + e + "); the trace stops here");
                return;
            }
        }
    }
}
