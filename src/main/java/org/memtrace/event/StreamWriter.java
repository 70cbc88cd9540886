package org.memtrace.event;

import static org.memtrace.event.StreamLayout.*;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Saves the records of a run as a stream file (memtrace run --save-stream): a header page, then every
 * record in order without padding. The header is written last, with {@code tail} = bytes of records, so
 * a file cut short by a crash of memtrace is recognisable by its missing magic.
 */
public final class StreamWriter implements AutoCloseable {
    private final FileChannel channel;
    private final ByteBuffer buffer = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
    private final MemorySegment bufferSegment = MemorySegment.ofBuffer(buffer);
    private long bytes;

    public StreamWriter(Path file) throws IOException {
        channel = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING);
        channel.position(HEADER_SIZE);
    }

    /** Appends one record (as handed out by {@link RecordHandler}). */
    public void write(MemorySegment segment, long offset, int size) throws IOException {
        if (buffer.remaining() < size) flush();
        MemorySegment.copy(segment, offset, bufferSegment, buffer.position(), size);
        buffer.position(buffer.position() + size);
        bytes += size;
    }

    private void flush() throws IOException {
        buffer.flip();
        while (buffer.hasRemaining()) channel.write(buffer);
        buffer.clear();
    }

    /** Writes the remaining records and the header; {@code lost} and {@code done} are copied from the ring. */
    public void finish(long lost, boolean done) throws IOException {
        flush();
        ByteBuffer h = ByteBuffer.allocate(HEADER_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        h.putLong((int) OFF_MAGIC, MAGIC);
        h.putInt((int) OFF_VERSION, VERSION);
        h.putInt((int) OFF_HEADER_SIZE, HEADER_SIZE);
        h.putLong((int) OFF_CAPACITY, bytes);
        h.putLong((int) OFF_TAIL, bytes);
        h.putLong((int) OFF_LOST, lost);
        h.putLong((int) OFF_DONE, done ? 1 : 0);
        while (h.hasRemaining()) channel.write(h, h.position());
        channel.force(false);
    }

    /** Bytes of records written so far. */
    public long bytes() { return bytes; }

    @Override
    public void close() throws IOException { channel.close(); }
}
