package org.memtrace.analysis;

import java.time.Duration;
import java.util.Map;

/**
 * How the trace ended, for the analyses' results: the events read from the trace ({@code records}), the
 * numbered events (the MadT lines' sequence numbers, {@code events}), the records the recorder dropped,
 * and what only a live run knows (elapsed time, exit status, memtrace's sentence about the ending), null
 * when a saved trace is read. {@code declinedLoops}: the loops a skeleton build left in full mode, by reason.
 * {@code cutShort}: why the trace stops before the program's end (memtrace was interrupted), null when it does not.
 */
public record Ending(long records, long events, long lost, Duration elapsed, Integer exitStatus, String description,
                     Map<String, Long> declinedLoops, String cutShort) {

    public Ending {
        declinedLoops = Map.copyOf(declinedLoops);
    }

    /** A saved trace read again: no run facts. */
    public static Ending offline(long records, long events, long lost, Map<String, Long> declinedLoops) {
        return new Ending(records, events, lost, null, null, null, declinedLoops, null);
    }
}
