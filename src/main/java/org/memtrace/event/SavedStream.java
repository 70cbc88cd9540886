package org.memtrace.event;

import static org.memtrace.event.StreamLayout.*;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
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

    public static Summary replayRecords(Path file, RecordHandler handler) throws IOException {
        try (Arena arena = Arena.ofConfined();
             var ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long fileSize = ch.size();
            if (fileSize < HEADER_SIZE) throw new StreamFormatException(0, "file is shorter than the header page");
            MemorySegment all = ch.map(FileChannel.MapMode.READ_ONLY, 0, fileSize, arena);
            RingReader.checkHeader(all);
            long bytes = all.get(ValueLayout.JAVA_LONG, OFF_TAIL);
            if (bytes < 0 || bytes > fileSize - HEADER_SIZE)
                throw new StreamFormatException(0, "header promises " + bytes + " bytes of records, file holds "
                        + (fileSize - HEADER_SIZE));
            MemorySegment data = all.asSlice(HEADER_SIZE, bytes);
            long pos = 0;
            long records = 0;
            while (pos < bytes) {
                int size = Records.checkedSize(data, pos, bytes - pos, pos);
                if (EventDecoder.type(data, pos) != MT_PAD) {
                    handler.record(data, pos, size, pos);
                    records++;
                }
                pos += size;
            }
            return new Summary(records, bytes, all.get(ValueLayout.JAVA_LONG, OFF_LOST),
                    all.get(ValueLayout.JAVA_LONG, OFF_DONE) != 0);
        }
    }
}
