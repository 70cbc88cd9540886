package org.memtrace.event;

import static org.memtrace.event.StreamLayout.*;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.function.Consumer;

/** Replays a stream saved by {@link StreamWriter}: the same events, in the same order, as the live run. */
public final class SavedStream {
    private SavedStream() {}

    /** What the saved header says about the run. */
    public record Summary(long records, long bytes, long lost, boolean done) {}

    public static Summary replay(Path file, Consumer<? super Event> consumer) throws IOException {
        return replayRecords(file, (s, off, size, pos) -> consumer.accept(EventDecoder.decode(s, off, pos)));
    }

    /** Records are read in chunks of this size; a record is at most 64 KiB, so a chunk always holds a whole one. */
    private static final int CHUNK = 1 << 20;

    /**
     * Reads the file front to back through one heap buffer (no mapping: the decoder's reads of a heap segment
     * need no liveness checks, and sequential reads let the kernel read ahead), handing each record to
     * {@code handler} as a slice of that buffer. A record cut by the chunk's end is moved to the front before
     * the next read.
     */
    public static Summary replayRecords(Path file, RecordHandler handler) throws IOException {
        try (Arena arena = Arena.ofConfined();
             var ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long fileSize = ch.size();
            if (fileSize < HEADER_SIZE) throw new StreamFormatException(0, "file is shorter than the header page");
            MemorySegment header = arena.allocate(HEADER_SIZE, 8);
            readFully(ch, header.asByteBuffer(), 0);
            RingReader.checkHeader(header);
            long bytes = header.get(ValueLayout.JAVA_LONG, OFF_TAIL);
            if (bytes < 0 || bytes > fileSize - HEADER_SIZE)
                throw new StreamFormatException(0, "header promises " + bytes + " bytes of records, file holds "
                        + (fileSize - HEADER_SIZE));
            byte[] chunk = new byte[CHUNK];
            MemorySegment data = MemorySegment.ofArray(chunk);
            long base = 0;     // stream position of chunk[0]
            int filled = 0;    // bytes of the chunk holding data
            int at = 0;        // next record in the chunk
            long records = 0;
            while (base + at < bytes) {
                if (filled - at < RECORD_HEADER_SIZE || filled - at < EventDecoder.size(data, at)) {
                    int kept = filled - at;
                    System.arraycopy(chunk, at, chunk, 0, kept);
                    base += at;
                    at = 0;
                    int want = (int) Math.min(CHUNK - kept, bytes - base - kept);
                    readFully(ch, ByteBuffer.wrap(chunk, kept, want), HEADER_SIZE + base + kept);
                    filled = kept + want;
                }
                long pos = base + at;
                int size = Records.checkedSize(data, at, bytes - pos, pos);
                if (EventDecoder.type(data, at) != MT_PAD) {
                    handler.record(data, at, size, pos);
                    records++;
                }
                at += size;
            }
            return new Summary(records, bytes, header.get(ValueLayout.JAVA_LONG, OFF_LOST),
                    header.get(ValueLayout.JAVA_LONG, OFF_DONE) != 0);
        }
    }

    /** Fills {@code into} from the file at {@code offset}; the header promised the bytes are there. */
    private static void readFully(FileChannel ch, ByteBuffer into, long offset) throws IOException {
        while (into.hasRemaining()) {
            int n = ch.read(into, offset);
            if (n < 0) throw new StreamFormatException(offset, "the file ends before the bytes its header promises");
            offset += n;
        }
    }
}
