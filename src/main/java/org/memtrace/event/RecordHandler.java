package org.memtrace.event;

import java.lang.foreign.MemorySegment;

/** Receives the raw bytes of one record (never a padding record), in stream order. */
@FunctionalInterface
public interface RecordHandler {
    /**
     * @param segment  memory holding the record; valid only during the call
     * @param offset   where the record starts in {@code segment}
     * @param size     the record's size in bytes, header included
     * @param position the record's stream position (bytes published before it)
     */
    void record(MemorySegment segment, long offset, int size, long position);
}
