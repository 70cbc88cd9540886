package org.memtrace.skeleton;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The emitted program's input file (docs/skeleton-c.md): LEB128 varints, and one fixed 9-byte field per
 * loop run that is filled in when the run ends ({@link #patch}), so the program learns how a run ended
 * before it reads the run's records.
 */
final class InputWriter implements AutoCloseable {
    static final int FIXED = 9;

    private final FileChannel channel;
    private final ByteBuffer buffer = ByteBuffer.allocate(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
    /** Bytes already handed to the channel. */
    private long flushed;

    InputWriter(Path file) throws IOException {
        channel = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.CREATE);
    }

    void varint(long v) throws IOException {
        if (buffer.remaining() < 10) flush();
        while ((v & ~0x7fL) != 0) {
            buffer.put((byte) (v & 0x7f | 0x80));
            v >>>= 7;
        }
        buffer.put((byte) v);
    }

    /** Reserves a fixed field; returns where it starts, for {@link #patch}. */
    long reserve() throws IOException {
        if (buffer.remaining() < FIXED) flush();
        long at = position();
        for (int i = 0; i < FIXED; i++) buffer.put((byte) 0);
        return at;
    }

    /** Fills the fixed field at {@code at}: one byte, then a 64-bit value, little-endian. */
    void patch(long at, int kind, long value) throws IOException {
        ByteBuffer field = ByteBuffer.allocate(FIXED).order(ByteOrder.LITTLE_ENDIAN).put((byte) kind).putLong(value).flip();
        for (int i = 0; i < FIXED; i++) {
            long p = at + i;
            if (p >= flushed) buffer.put((int) (p - flushed), field.get(i));
            else channel.write(ByteBuffer.wrap(new byte[] {field.get(i)}), p);
        }
    }

    long position() { return flushed + buffer.position(); }

    private void flush() throws IOException {
        buffer.flip();
        while (buffer.hasRemaining()) flushed += channel.write(buffer, flushed);
        buffer.clear();
    }

    @Override
    public void close() throws IOException {
        try {
            flush();
        } finally {
            channel.close();
        }
    }
}
