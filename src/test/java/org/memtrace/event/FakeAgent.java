package org.memtrace.event;

import static org.memtrace.event.StreamLayout.*;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** The producer half of the ring, as the agent implements it, for tests: pads at the end and wraps. */
public final class FakeAgent implements AutoCloseable {
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private final Arena arena = Arena.ofShared();
    private final MemorySegment header;
    private final MemorySegment data;
    private final long capacity;
    private long tail;

    public FakeAgent(Path ring) throws IOException {
        try (var ch = FileChannel.open(ring, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            MemorySegment all = ch.map(FileChannel.MapMode.READ_WRITE, 0, ch.size(), arena);
            capacity = all.get(ValueLayout.JAVA_LONG, OFF_CAPACITY);
            header = all.asSlice(0, HEADER_SIZE);
            data = all.asSlice(HEADER_SIZE, capacity);
            tail = (long) LONG.getAcquire(header, OFF_TAIL);
        }
    }

    /** Writes the record (and a padding record first if it would cross the end), without publishing. */
    public boolean append(byte[] record) {
        long off = tail & (capacity - 1);
        long pad = off + record.length > capacity ? capacity - off : 0;
        long head = (long) LONG.getAcquire(header, OFF_HEAD);
        if (tail + pad + record.length - head > capacity) {
            header.set(ValueLayout.JAVA_LONG, OFF_LOST, header.get(ValueLayout.JAVA_LONG, OFF_LOST) + 1);
            return false;
        }
        if (pad > 0) {
            MemorySegment.copy(MemorySegment.ofArray(TestRecords.pad((int) pad)), 0, data, off, pad);
            tail += pad;
            off = 0;
        }
        MemorySegment.copy(MemorySegment.ofArray(record), 0, data, off, record.length);
        tail += record.length;
        return true;
    }

    public void publish() { LONG.setRelease(header, OFF_TAIL, tail); }

    public boolean put(byte[] record) {
        boolean ok = append(record);
        publish();
        return ok;
    }

    /** Publishes raw garbage: {@code bytes} at the current tail, and moves tail past it. */
    public void putRaw(byte[] bytes, long claimedLength) {
        MemorySegment.copy(MemorySegment.ofArray(bytes), 0, data, tail & (capacity - 1), bytes.length);
        tail += claimedLength;
        publish();
    }

    public void done() { header.set(ValueLayout.JAVA_LONG, OFF_DONE, 1); }

    public void setLost(long lost) { header.set(ValueLayout.JAVA_LONG, OFF_LOST, lost); }

    @Override
    public void close() { arena.close(); }
}
