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

/**
 * The consumer side of the shared ring (agent/include/memtrace_stream.h). The agent publishes records by
 * advancing {@code tail} with a release store; reading it with acquire makes the record bytes before it
 * visible. {@code head} is written with release so the agent never reuses bytes still being read.
 * Single consumer: only one thread may call {@link #poll}.
 */
public final class RingReader implements AutoCloseable {
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final Arena arena;
    private final MemorySegment header;
    private final MemorySegment data;
    private final long capacity;
    private long head;

    private RingReader(Arena arena, MemorySegment mapped, long capacity) {
        this.arena = arena;
        this.header = mapped.asSlice(0, HEADER_SIZE);
        this.data = mapped.asSlice(HEADER_SIZE, capacity);
        this.capacity = capacity;
        this.head = (long) LONG.getAcquire(header, OFF_HEAD);
    }

    /** Creates the ring file (capacity a power of two) with an initialised header, and maps it. */
    public static RingReader create(Path file, long capacity) throws IOException {
        if (capacity < 4096 || Long.bitCount(capacity) != 1)
            throw new IllegalArgumentException("ring capacity must be a power of two of at least 4096: " + capacity);
        MemorySegment mapped;
        Arena arena = Arena.ofShared();
        try (var ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE, StandardOpenOption.CREATE)) {
            ch.truncate(0);
            // Sparse file: pages only get backing once the agent writes into them.
            ch.write(java.nio.ByteBuffer.allocate(1), HEADER_SIZE + capacity - 1);
            mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, HEADER_SIZE + capacity, arena);
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
        mapped.set(ValueLayout.JAVA_INT, OFF_VERSION, VERSION);
        mapped.set(ValueLayout.JAVA_INT, OFF_HEADER_SIZE, HEADER_SIZE);
        mapped.set(ValueLayout.JAVA_LONG, OFF_CAPACITY, capacity);
        // The magic last: a reader that sees it sees a complete header.
        LONG.setRelease(mapped, OFF_MAGIC, MAGIC);
        return new RingReader(arena, mapped, capacity);
    }

    /** Maps an existing ring created by {@link #create} (by this or another process). */
    public static RingReader open(Path file) throws IOException {
        Arena arena = Arena.ofShared();
        try (var ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            MemorySegment first = ch.map(FileChannel.MapMode.READ_ONLY, 0, HEADER_SIZE, arena);
            checkHeader(first);
            long capacity = first.get(ValueLayout.JAVA_LONG, OFF_CAPACITY);
            if (Long.bitCount(capacity) != 1 || ch.size() < HEADER_SIZE + capacity)
                throw new StreamFormatException(0, "ring capacity " + capacity + " does not match the file");
            return new RingReader(arena, ch.map(FileChannel.MapMode.READ_WRITE, 0, HEADER_SIZE + capacity, arena), capacity);
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    static void checkHeader(MemorySegment header) {
        if (header.get(ValueLayout.JAVA_LONG, OFF_MAGIC) != MAGIC)
            throw new StreamFormatException(0, "bad magic (not a memtrace event stream)");
        int version = header.get(ValueLayout.JAVA_INT, OFF_VERSION);
        if (version != VERSION) throw new StreamFormatException(0, "unsupported stream version " + version);
        int hs = header.get(ValueLayout.JAVA_INT, OFF_HEADER_SIZE);
        if (hs != HEADER_SIZE) throw new StreamFormatException(0, "unexpected header size " + hs);
    }

    /**
     * Hands every record published since the last call to {@code handler}, then releases their space to
     * the agent. Returns the number of records handed on (padding excluded).
     */
    public int poll(RecordHandler handler) {
        long tail = (long) LONG.getAcquire(header, OFF_TAIL);
        if (tail == head) return 0;
        if (tail < head || tail - head > capacity)
            throw new StreamFormatException(head, "tail " + tail + " is not within one ring of head " + head);
        int n = 0;
        long mask = capacity - 1;
        try {
            while (head < tail) {
                long off = head & mask;
                long room = Math.min(tail - head, capacity - off);
                // one read of the header word for the framing: each segment access is a call chain under C1
                long header = data.get(ValueLayout.JAVA_LONG_UNALIGNED, off);
                int size = Records.checkedSize(header, room, head);
                if ((header & 0xff) != MT_PAD) {
                    handler.record(data, off, size, head);
                    n++;
                }
                head += size;
            }
        } finally {
            LONG.setRelease(header, OFF_HEAD, head);
        }
        return n;
    }

    /** Gives everything published so far back to the agent unread; used once the stream is known to be broken. */
    public void discard() {
        head = (long) LONG.getAcquire(header, OFF_TAIL);
        LONG.setRelease(header, OFF_HEAD, head);
    }

    /** Bytes consumed so far. */
    public long head() { return head; }

    /** Bytes the agent has published and this reader not yet consumed. */
    public long backlog() { return (long) LONG.getAcquire(header, OFF_TAIL) - head; }

    public long tail() { return (long) LONG.getAcquire(header, OFF_TAIL); }

    public long capacity() { return capacity; }

    /** Records the agent dropped because the ring was full and nobody consumed. */
    public long lost() { return (long) LONG.getAcquire(header, OFF_LOST); }

    /** Whether the agent wrote its final record. */
    public boolean done() { return (long) LONG.getAcquire(header, OFF_DONE) != 0; }

    @Override
    public void close() { arena.close(); }
}
