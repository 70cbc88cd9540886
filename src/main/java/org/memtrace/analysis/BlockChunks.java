package org.memtrace.analysis;

import org.memtrace.event.Event;

/**
 * A block operation as the line-sized reads and writes a simple copy loop would make: chunks of at most
 * {@code line} bytes that never cross a line boundary of the written range (of the read range for a
 * fetch). A copy reads each source chunk, then writes the destination chunk, in address order; its source
 * chunks may straddle a line when source and destination are aligned differently, as a real copy's loads do.
 * The cache simulator and every exporter expand blocks this one way, so their results agree.
 */
public final class BlockChunks {
    private BlockChunks() {}

    /** Receives one chunk. */
    @FunctionalInterface
    public interface Sink {
        void chunk(long address, int size, boolean write);
    }

    public static void expand(Event.Block b, int line, Sink sink) {
        long length = b.length();
        switch (b.op()) {
            case COPY -> {
                for (long done = 0; done < length; ) {
                    int n = chunk(b.destination() + done, length - done, line);
                    sink.chunk(b.source() + done, n, false);
                    sink.chunk(b.destination() + done, n, true);
                    done += n;
                }
            }
            case STORE -> each(b.destination(), length, line, true, sink);
            case FETCH -> each(b.source(), length, line, false, sink);
        }
    }

    private static void each(long address, long length, int line, boolean write, Sink sink) {
        for (long done = 0; done < length; ) {
            int n = chunk(address + done, length - done, line);
            sink.chunk(address + done, n, write);
            done += n;
        }
    }

    /** Bytes from {@code address} to the end of its line, at most {@code left}. */
    private static int chunk(long address, long left, int line) {
        long toEnd = line - (address & (line - 1));
        return (int) Math.min(toEnd, left);
    }
}
