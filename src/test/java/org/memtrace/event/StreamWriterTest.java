package org.memtrace.event;

import static org.assertj.core.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StreamWriterTest {
    @TempDir Path dir;

    @Test
    void savedStreamReplaysTheSameEventsWithoutPadding() throws Exception {
        Path ring = dir.resolve("ring");
        Path saved = dir.resolve("saved.mts");
        List<Event> live = new ArrayList<>();
        try (var reader = RingReader.create(ring, 4096); var agent = new FakeAgent(ring); var writer = new StreamWriter(saved)) {
            for (int i = 0; i < 500; i++) {
                agent.put(i % 3 == 0 ? TestRecords.module(2, i, new byte[] {9}, "lib" + i)
                        : TestRecords.access(1, 0x400000 + i, 0x600000 + 8L * i, i % 2 == 0, false));
                if (i % 50 == 0) reader.poll((s, off, size, pos) -> {
                    live.add(EventDecoder.decode(s, off, pos));
                    try { writer.write(s, off, size); } catch (java.io.IOException e) { throw new AssertionError(e); }
                });
            }
            reader.poll((s, off, size, pos) -> {
                live.add(EventDecoder.decode(s, off, pos));
                try { writer.write(s, off, size); } catch (java.io.IOException e) { throw new AssertionError(e); }
            });
            agent.setLost(3);
            writer.finish(reader.lost(), true);
        }
        List<Event> replayed = new ArrayList<>();
        SavedStream.Summary summary = SavedStream.replay(saved, replayed::add);
        assertThat(replayed).hasSize(500);
        assertThat(replayed).usingRecursiveFieldByFieldElementComparator().isEqualTo(live);
        assertThat(summary.lost()).isEqualTo(3);
        assertThat(summary.done()).isTrue();
        assertThat(Files.size(saved)).isEqualTo(StreamLayout.HEADER_SIZE + summary.bytes());
    }

    @Test
    void truncatedSavedStreamIsReported() throws Exception {
        Path saved = dir.resolve("saved.mts");
        try (var writer = new StreamWriter(saved)) {
            var rec = TestRecords.access(1, 1, 2, false, false);
            writer.write(java.lang.foreign.MemorySegment.ofArray(rec), 0, rec.length);
            writer.finish(0, true);
        }
        try (var ch = java.nio.channels.FileChannel.open(saved, java.nio.file.StandardOpenOption.WRITE)) {
            ch.truncate(StreamLayout.HEADER_SIZE + 8);
        }
        assertThatThrownBy(() -> SavedStream.replay(saved, e -> {})).isInstanceOf(StreamFormatException.class)
                .hasMessageContaining("header promises 24 bytes");
    }
}
