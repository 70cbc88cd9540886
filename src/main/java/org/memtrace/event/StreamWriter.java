package org.memtrace.event;

import static org.memtrace.event.StreamLayout.*;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * Saves the records of a run as a stream file (memtrace run --save-stream), version 2
 * ({@link StreamLayout#SAVED_VERSION_BLOCKS}): a header page written first (tail 0: not finished), then the
 * records in order without padding, in blocks of up to 256 KiB, each behind a header with the CRC32C of its
 * records; {@link #finish} writes the header again with {@code tail} = bytes after the header page. A file
 * whose writer was killed or hit a full disk is read up to its last whole block and said to be cut short.
 */
public final class StreamWriter implements AutoCloseable {
    private final FileChannel channel;
    /** A block's size: what a killed memtrace loses at most (a 64 KiB record always fits in it). */
    private final ByteBuffer buffer = ByteBuffer.allocateDirect(256 << 10).order(ByteOrder.LITTLE_ENDIAN);
    private final MemorySegment bufferSegment = MemorySegment.ofBuffer(buffer);
    private final CRC32C crc = new CRC32C();  // before the constructor writes the header
    /** Bytes of records written so far, and bytes of the file after its header page (block headers too). */
    private long bytes, written;

    public StreamWriter(Path file) throws IOException {
        channel = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING);
        writeHeader(0, 0, false);
        buffer.position(BLOCK_HEADER_SIZE);
    }

    /** Appends one record (as handed out by {@link RecordHandler}). */
    public void write(MemorySegment segment, long offset, int size) throws IOException {
        if (buffer.remaining() < size) flush();
        MemorySegment.copy(segment, offset, bufferSegment, buffer.position(), size);
        buffer.position(buffer.position() + size);
        bytes += size;
    }

    /** The buffered records as one block, behind its header. */
    private void flush() throws IOException {
        int length = buffer.position() - BLOCK_HEADER_SIZE;
        if (length == 0) return;
        crc.reset();
        crc.update(buffer.slice(BLOCK_HEADER_SIZE, length));
        buffer.putInt(0, BLOCK_MAGIC).putInt(BLOCK_OFF_LENGTH, length).putInt(BLOCK_OFF_CRC, (int) crc.getValue());
        crc.reset();
        crc.update(buffer.slice(0, BLOCK_OFF_HEADER_CRC));
        buffer.putInt(BLOCK_OFF_HEADER_CRC, (int) crc.getValue());
        buffer.flip();
        written += buffer.remaining();
        while (buffer.hasRemaining()) channel.write(buffer, HEADER_SIZE + written - buffer.remaining());
        buffer.clear();
        buffer.position(BLOCK_HEADER_SIZE);
    }

    private void writeHeader(long tail, long lost, boolean done) throws IOException {
        ByteBuffer h = ByteBuffer.allocate(HEADER_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        h.putLong((int) OFF_MAGIC, MAGIC);
        h.putInt((int) OFF_VERSION, SAVED_VERSION_BLOCKS);
        h.putInt((int) OFF_HEADER_SIZE, HEADER_SIZE);
        h.putLong((int) OFF_CAPACITY, tail);
        h.putLong((int) OFF_TAIL, tail);
        h.putLong((int) OFF_LOST, lost);
        h.putLong((int) OFF_DONE, done ? 1 : 0);
        crc.reset();
        crc.update(h.array(), 0, OFF_SAVED_HEADER_CRC);
        h.putInt(OFF_SAVED_HEADER_CRC, (int) crc.getValue());
        while (h.hasRemaining()) channel.write(h, h.position());
    }

    /** Writes the remaining records and the header again; {@code lost} and {@code done} are copied from the ring. */
    public void finish(long lost, boolean done) throws IOException {
        flush();
        channel.force(false); // the blocks are on disk before the header says they are all there
        writeHeader(written, lost, done);
        channel.force(false);
    }

    /** Bytes of records written so far. */
    public long bytes() { return bytes; }

    @Override
    public void close() throws IOException { channel.close(); }
}
