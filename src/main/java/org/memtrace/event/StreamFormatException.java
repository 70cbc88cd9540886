package org.memtrace.event;

/** The stream holds something the agent cannot have written: the message names the stream position. */
public final class StreamFormatException extends RuntimeException {
    private final long position;

    public StreamFormatException(long position, String problem) {
        super("corrupt event stream at offset " + position + ": " + problem);
        this.position = position;
    }

    /** Byte position in the stream (bytes ever published before the bad record). */
    public long position() { return position; }
}
