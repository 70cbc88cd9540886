package org.memtrace.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.memtrace.event.Event;
import org.memtrace.event.EventSink;
import org.memtrace.event.SavedStream;
import org.memtrace.event.StreamFormatException;
import org.memtrace.event.StreamLayout;
import org.memtrace.io.IoReason;
import org.memtrace.launch.LaunchException;
import org.memtrace.mtr.MtrFile;
import org.memtrace.mtr.MtrFormatException;
import org.memtrace.mtr.MtrReader;
import org.memtrace.symbols.AddressSpace;
import org.memtrace.trace.DecodedShapes;
import org.memtrace.trace.InstructionShapes;
import org.memtrace.x86.ZydisUnavailableException;

/**
 * Opens the traces the offline commands read: a {@code .mtr} file that a program built with memtrace cc
 * wrote, or an event stream saved by {@code memtrace run --save-stream}, told apart by their first bytes.
 * A damaged or cut-short trace still delivers what comes before the damage; what is missing is in the
 * outcome's problems, for the command to report.
 */
final class TraceInput {
    private TraceInput() {}

    /**
     * What reading delivered: {@code events} handed to the consumer, {@code lost} records the recorder says
     * it dropped, one sentence per problem (damage, a missing end mark), and the loops a skeleton build left
     * in full mode, by reason (empty for other traces).
     */
    record Outcome(long events, long lost, List<String> problems, Map<String, Long> declinedLoops) {
        Outcome(long events, long lost, List<String> problems) {
            this(events, lost, problems, Map.of());
        }
    }

    /** Refuses a trace input that is no regular file, saying what it is instead (a directory is no missing file). */
    static void requireFile(Path file) throws LaunchException {
        if (Files.isRegularFile(file)) return;
        if (Files.isDirectory(file)) throw LaunchException.usage(file + " is a directory, not a trace file");
        if (Files.exists(file)) throw LaunchException.usage(file + " is not a regular file (a device, FIFO or socket), not a trace file");
        throw LaunchException.usage("no trace file " + file);
    }

    /** Whether {@code file} is a {@code .mtr} file (else a saved stream); anything else is a usage error. */
    static boolean compiledIn(Path file) throws LaunchException {
        requireFile(file);
        byte[] head;
        try (InputStream in = Files.newInputStream(file)) {
            head = in.readNBytes(8);
        } catch (IOException e) {
            throw LaunchException.usage("cannot read " + file + ": " + IoReason.of(e));
        }
        if (MtrFile.hasMagic(head)) return true;
        long magic = 0;
        for (int i = head.length - 1; i >= 0; i--) magic = magic << 8 | (head[i] & 0xff);
        if (head.length == 8 && magic == StreamLayout.MAGIC) return false;
        // a text trace (what run and print write, whatever its name) is the commands' output, not their input
        if (head.length >= 2 && head[0] == '#' && head[1] == ' ')
            throw LaunchException.usage(file + " is a text trace (what memtrace run and print write): read it as it is, or"
                    + " give this command the .mtr file of a memtrace cc build or a stream saved by memtrace run --save-stream");
        throw LaunchException.usage(file + " is neither a .mtr file nor an event stream saved by memtrace run");
    }

    /** Instruction shapes from the x86 decoder, reading code through the naming's address space. */
    static InstructionShapes shapes(AddressSpace space, PrintWriter err) {
        try {
            return new DecodedShapes(space);
        } catch (ZydisUnavailableException e) {
            return decoderMissing(err, e);
        }
    }

    /** The one warning every command gives when the x86 decoder cannot be loaded; the shapes to go on with. */
    static InstructionShapes decoderMissing(PrintWriter err, ZydisUnavailableException e) {
        String message = Main.oneLine(e.getMessage());
        err.println((message.startsWith("memtrace: ") ? "" : "memtrace: ") + "warning: "
                + message.substring(message.startsWith("memtrace: ") ? "memtrace: ".length() : 0) + " (access sizes are unknown: 0)");
        err.flush();
        return InstructionShapes.UNKNOWN;
    }

    /** Hands every event of the trace to {@code consumer} in order; throws only when nothing can be read. */
    static Outcome replay(Path file, EventSink consumer, Progress progress) throws LaunchException {
        return replayAll(file, consumer, progress);
    }

    /**
     * The status of a command whose standard output's reader went away ({@code | head}): 128 + SIGPIPE, what a
     * shell shows for a C tool killed so.
     */
    static final int READER_GONE = 141;

    /** Thrown by {@link #replay} when its output's reader has gone; no stack: it is the normal end of a pipe. */
    static final class ReaderGone extends Exception {
        ReaderGone() { super("the output's reader has gone", null, false, false); }
    }

    /**
     * As {@link #replay(Path, EventSink, Progress)}, but stops at the first event after {@code readerGone} turns
     * true, by throwing {@link ReaderGone}: reading a large trace to its end for nobody would take minutes after
     * {@code | head} has what it wanted.
     */
    static Outcome replay(Path file, EventSink consumer, Progress progress, BooleanSupplier readerGone)
            throws LaunchException, ReaderGone {
        try {
            return replayAll(file, new UntilReaderGone(consumer, readerGone), progress);
        } catch (UntilReaderGone.Stopped stopped) {
            throw new ReaderGone();
        }
    }

    /** The consumer until the output's reader goes; one test an event. */
    private record UntilReaderGone(EventSink consumer, BooleanSupplier gone) implements EventSink {
        /** Unchecked, to leave the readers' loops. */
        static final class Stopped extends RuntimeException {
            Stopped() { super(null, null, false, false); }
        }

        @Override
        public void accept(Event event) {
            if (gone.getAsBoolean()) throw new Stopped();
            consumer.accept(event);
        }

        @Override
        public void fault(int tid, long ip, long address, boolean write, boolean sameStep) {
            if (gone.getAsBoolean()) throw new Stopped();
            consumer.fault(tid, ip, address, write, sameStep);
        }

        @Override
        public void probe(int tid, long address, Event.ProbeSite site) {
            if (gone.getAsBoolean()) throw new Stopped();
            consumer.probe(tid, address, site);
        }
    }

    private static Outcome replayAll(Path file, EventSink consumer, Progress progress) throws LaunchException {
        boolean mtr = compiledIn(file);
        try {
            return mtr ? replayMtr(file, consumer, progress) : replayStream(file, consumer, progress);
        } finally {
            progress.end();
        }
    }

    /** The exit status of every reader for a trace that is damaged or cut short (what precedes the damage is read). */
    static final int DAMAGED = 1;

    /**
     * Tells {@code err} what reading could not deliver, one line per problem, and the records the recorder
     * dropped; returns the command's status: 0, or {@link #DAMAGED} when the trace is damaged or cut short.
     */
    static int reportProblems(Path file, Outcome o, PrintWriter err) {
        if (o.lost() > 0) err.println("memtrace: warning: " + o.lost() + " events were lost while recording " + file);
        for (String p : o.problems()) err.println("memtrace: " + Main.oneLine(p));
        err.flush();
        return o.problems().isEmpty() ? 0 : DAMAGED;
    }

    private static Outcome replayMtr(Path file, EventSink consumer, Progress progress) throws LaunchException {
        try (MtrFile mtr = MtrFile.open(file)) {
            long[] events = {0}, begun = {0};
            // the share of the chunks' stored bytes begun: threads' chunks are read in step, so it grows evenly
            long total = mtr.storedBytes();
            // access records by their fields: no event object per access (bench/results/offline-mtr.md)
            MtrReader.Result r = MtrReader.read(mtr, event -> {
                consumer.accept(event);
                progress.update(begun[0], total, ++events[0]);
            }, (tid, address, site) -> {
                consumer.probe(tid, address, site);
                progress.update(begun[0], total, ++events[0]);
            }, bytes -> begun[0] = bytes);
            return new Outcome(events[0], r.dropped(), r.problems(), r.skeleton().declined());
        } catch (MtrFormatException e) {
            throw LaunchException.environment(file + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw LaunchException.environment("cannot read " + file + ": " + IoReason.of(e), e);
        }
    }

    private static Outcome replayStream(Path file, EventSink consumer, Progress progress) throws LaunchException {
        List<String> problems = new ArrayList<>();
        long[] events = {0};
        long lost = 0;
        try {
            long total = Files.size(file);
            SavedStream.Summary s = SavedStream.replay(file, consumer, (position, records) -> {
                events[0] = records;
                progress.update(position, total, records);
            });
            problems.addAll(s.damage());
            if (!s.done()) problems.add("the stream has no end mark: the recording was cut short; it holds what was saved before");
            lost = s.lost();
        } catch (StreamFormatException e) {
            problems.add(file + ": " + e.getMessage() + "; the rest of the stream is ignored");
        } catch (IOException e) {
            throw LaunchException.environment("cannot read " + file + ": " + IoReason.of(e), e);
        }
        return new Outcome(events[0], lost, problems);
    }
}
