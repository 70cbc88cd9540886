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
        assertThat(summary.damage()).isEmpty();
        // one block: the records fit in the writer's buffer
        assertThat(Files.size(saved)).isEqualTo(StreamLayout.HEADER_SIZE + StreamLayout.BLOCK_HEADER_SIZE + summary.bytes());
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
        List<Event> read = new ArrayList<>();
        SavedStream.Summary s = SavedStream.replay(saved, read::add);
        assertThat(read).isEmpty();
        assertThat(s.damage()).singleElement().asString()
                .isEqualTo("the stream is cut short at offset 4104, in the header of block 0 (offset 4096); the blocks before it are read");
    }

    @Test
    void aStreamWhoseWriterDiedIsReadUpToItsLastWholeBlock() throws Exception {
        Path saved = dir.resolve("killed.mts");
        var writer = new StreamWriter(saved);
        for (int i = 0; i < 20_000; i++) {   // 480 KB of records: one whole block and part of the next
            byte[] rec = TestRecords.access(1, 0x401000 + i, 0x600000 + 8L * i, false, false);
            writer.write(java.lang.foreign.MemorySegment.ofArray(rec), 0, rec.length);
        }
        writer.close();                      // no finish: the header page is the one written first
        List<Event> read = new ArrayList<>();
        SavedStream.Summary s = SavedStream.replay(saved, read::add);
        assertThat(s.done()).isFalse();
        assertThat(s.damage()).isEmpty();    // nothing damaged: the header says the recording did not end
        assertThat(read).hasSize((256 * 1024 - StreamLayout.BLOCK_HEADER_SIZE) / 24);
        assertThat(((Event.Access) read.getLast()).address()).isEqualTo(0x600000 + 8L * (read.size() - 1));
    }

    /** Writes {@code faults} fault records, a module record after every 1000th, then {@code tail}. */
    private Path bigStream(int faults, byte[] tail) throws Exception {
        Path saved = dir.resolve("big.mts");
        try (var writer = new StreamWriter(saved)) {
            for (int i = 0; i < faults; i++) {
                byte[] rec = TestRecords.access(1 + i % 3, 0x401000 + i, 0x600000 + 8L * i, i % 2 == 0, i % 5 == 0);
                writer.write(java.lang.foreign.MemorySegment.ofArray(rec), 0, rec.length);
                if (i % 1000 == 999) {
                    byte[] m = TestRecords.module(2, i, new byte[] {9}, "lib" + i);
                    writer.write(java.lang.foreign.MemorySegment.ofArray(m), 0, m.length);
                }
            }
            if (tail != null) writer.write(java.lang.foreign.MemorySegment.ofArray(tail), 0, tail.length);
            writer.finish(0, true);
        }
        return saved;
    }

    /** Collects faults by their fields and other events as they are. */
    private static final class Collect implements EventSink {
        final List<Event> events = new ArrayList<>();
        int faults;

        @Override
        public void accept(Event event) { events.add(event); }

        @Override
        public void fault(int tid, long ip, long address, boolean write, boolean sameStep) {
            // the fields of the i-th fault written by bigStream
            int i = faults++;
            assertThat(new Event.Access(tid, ip, address, write, sameStep))
                    .isEqualTo(new Event.Access(1 + i % 3, 0x401000 + i, 0x600000 + 8L * i, i % 2 == 0, i % 5 == 0));
            events.add(null);
        }
    }

    @Test
    void aStreamOfManyBatchesAndChunksArrivesWholeAndInOrder() throws Exception {
        // 100,000 faults of 24 bytes: 25 batches of 4096 records, 3 chunks of 1 MiB, records cut by a chunk's end
        Path saved = bigStream(100_000, null);
        Collect sink = new Collect();
        long[] last = new long[2];
        SavedStream.Summary summary = SavedStream.replay(saved, sink, (position, records) -> {
            assertThat(position).isGreaterThan(last[0]);
            last[0] = position;
            last[1] = records;
        });
        assertThat(sink.faults).isEqualTo(100_000);
        assertThat(sink.events).hasSize(100_100);
        for (int m = 0; m < 100; m++)
            assertThat(sink.events.get(1000 * m + 1000 + m)).isInstanceOfSatisfying(Event.Module.class, e -> assertThat(e.path()).startsWith("lib"));
        assertThat(summary.records()).isEqualTo(100_100);
        assertThat(summary.done()).isTrue();
        assertThat(last).containsExactly(summary.bytes(), 100_100);
    }

    @Test
    void damageAfterManyBatchesEndsTheReplayAfterEveryRecordBeforeIt() throws Exception {
        Path saved = bigStream(10_000, TestRecords.block(1, 0, 0x401000, 0x600000, 0, 8, 1));
        Collect sink = new Collect();
        long damage = 10_000 * 24L + 10 * TestRecords.module(2, 0, new byte[] {9}, "lib999").length;
        assertThatThrownBy(() -> SavedStream.replay(saved, sink, (position, records) -> {}))
                .isInstanceOf(StreamFormatException.class)
                .hasMessage("corrupt event stream at offset " + damage + ": unknown block operation 0");
        assertThat(sink.faults).isEqualTo(10_000);
        assertThat(sink.events).hasSize(10_010);
    }

    @Test
    void aSinkThatThrowsStopsTheReaderAndItsExceptionReachesTheCaller() throws Exception {
        Path saved = bigStream(100_000, null);
        EventSink failing = new EventSink() {
            int faults;

            @Override
            public void accept(Event event) {}

            @Override
            public void fault(int tid, long ip, long address, boolean write, boolean sameStep) {
                if (++faults == 5000) throw new IllegalStateException("analysis failed");
            }
        };
        assertThatThrownBy(() -> SavedStream.replay(saved, failing, (position, records) -> {}))
                .isInstanceOf(IllegalStateException.class).hasMessage("analysis failed");
        // replay returns only after its reader thread has ended
        assertThat(Thread.getAllStackTraces().keySet()).noneMatch(t -> t.getName().equals("memtrace stream reader"));
    }
}
