package org.memtrace.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.memtrace.event.Event;
import org.memtrace.event.EventDecoder;
import org.memtrace.event.SavedStream;
import org.memtrace.event.StreamFormatException;
import org.memtrace.launch.LaunchException;
import org.memtrace.symbols.AddressSpace;
import org.memtrace.trace.DecodedShapes;
import org.memtrace.trace.EventConsumer;
import org.memtrace.trace.InstructionShapes;
import org.memtrace.x86.ZydisUnavailableException;

/**
 * Opens the traces offline commands read. Today that is a saved event stream ({@code memtrace run
 * --save-stream}); other trace files plug in here, recognised by their first bytes.
 */
final class TraceInput {
    private TraceInput() {}

    /** Instruction shapes from the x86 decoder, reading code through the naming's address space. */
    static InstructionShapes shapes(AddressSpace space, PrintWriter err) {
        try {
            return new DecodedShapes(space);
        } catch (ZydisUnavailableException e) {
            err.println("memtrace: " + Main.oneLine(e.getMessage()) + " (access sizes are unknown: 0)");
            return InstructionShapes.UNKNOWN;
        }
    }

    /**
     * Hands every event of the trace to {@code consumer} in order (not calling finish), then warns on
     * {@code err} about what the file says is missing. Returns the number of events.
     */
    static long replay(Path file, EventConsumer consumer, Progress progress, PrintWriter err) throws LaunchException {
        if (!Files.isRegularFile(file)) throw LaunchException.usage("no trace file " + file);
        if (!Files.isReadable(file)) throw LaunchException.usage("cannot read " + file + ": permission denied");
        try {
            long total = Files.size(file);
            long[] events = {0};
            SavedStream.Summary s = SavedStream.replayRecords(file, (segment, offset, size, position) -> {
                Event event;
                try {
                    event = EventDecoder.decode(segment, offset, position);
                } catch (IllegalArgumentException e) {
                    // a well-framed record with a code the agent never writes (unknown function, kind…)
                    throw new StreamFormatException(position, e.getMessage());
                }
                consumer.accept(event);
                progress.update(position, total, ++events[0]);
            });
            progress.end();
            if (s.lost() > 0) err.println("memtrace: warning: " + s.lost() + " events were lost while recording " + file);
            return s.records();
        } catch (StreamFormatException e) {
            progress.end();
            throw LaunchException.environment(file + ": " + e.getMessage(), e);
        } catch (IOException e) {
            progress.end();
            throw LaunchException.environment("cannot read " + file + ": " + LaunchException.reason(e), e);
        }
    }
}
