package org.memtrace.event;

import static org.assertj.core.api.Assertions.*;
import static org.memtrace.event.StreamLayout.*;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RingReaderTest {
    @TempDir Path dir;

    private static List<Event> drain(RingReader r) {
        List<Event> out = new ArrayList<>();
        r.poll((s, off, size, pos) -> out.add(EventDecoder.decode(s, off, pos)));
        return out;
    }

    @Test
    void decodesEveryRecordType() throws Exception {
        Path ring = dir.resolve("r");
        try (var reader = RingReader.create(ring, 1 << 16); var agent = new FakeAgent(ring)) {
            agent.append(TestRecords.hello(7, 7));
            agent.append(TestRecords.access(7, 0x401000, 0x404040, true, false));
            agent.append(TestRecords.block(7, 3 /* fetch */ | BLK_SYSCALL, 0x401100, 0, 0x4052a0, 12, 1));
            agent.append(TestRecords.alloc(7, 1, 0x401200, 0x4052a0, 24, 20));
            agent.append(TestRecords.module(7, 0x7f00, new byte[] {1, 2, 3}, "/lib/libc.so.6"));
            agent.append(TestRecords.mapping(7, 0x404000, 0x405000, 0x3000, 3, true, "/tmp/prog"));
            agent.append(TestRecords.range(7, true, 0x405000, 0x426000, 2, 3));
            agent.append(TestRecords.thread(8, true, 7));
            agent.append(TestRecords.control(7, false, 0x401300));
            agent.append(TestRecords.stats(7, 10, 10, 2, 0, 1));
            agent.append(TestRecords.fork(7, 99));
            agent.append(TestRecords.exit(7, EXIT_SIGNAL, 11, 0x401400, 0, ""));
            agent.publish();

            List<Event> events = drain(reader);
            assertThat(events).hasSize(12);
            assertThat(events.get(0)).isEqualTo(new Event.Hello(7, 7, 4096, 0x7f0000001000L, 0x7f0000009000L, 15));
            assertThat(events.get(1)).isEqualTo(new Event.Access(7, 0x401000, 0x404040, true, false));
            assertThat(events.get(2)).isEqualTo(new Event.Block(7, Event.BlockOp.FETCH, true, 0x401100, 0, 0x4052a0, 12, 1));
            var alloc = (Event.Alloc) events.get(3);
            assertThat(alloc.function()).isEqualTo(Event.AllocFunction.MALLOC);
            assertThat(alloc.result()).isEqualTo(0x4052a0);
            assertThat(alloc.arg(0)).isEqualTo(20);
            var module = (Event.Module) events.get(4);
            assertThat(module.buildId()).containsExactly(1, 2, 3);
            assertThat(module.path()).isEqualTo("/lib/libc.so.6");
            assertThat(events.get(5)).isEqualTo(new Event.Mapping(7, 0x404000, 0x405000, 0x3000, 3, true, "/tmp/prog"));
            assertThat(events.get(6)).isEqualTo(new Event.Range(7, true, 0x405000, 0x426000, Event.RegionKind.HEAP, 3));
            assertThat(events.get(7)).isEqualTo(new Event.ThreadEvent(8, true, 7));
            assertThat(events.get(8)).isEqualTo(new Event.Control(7, false, 0x401300));
            assertThat(events.get(9)).isEqualTo(new Event.Stats(7, 10, 10, 2, 0, 1));
            assertThat(events.get(10)).isEqualTo(new Event.Fork(7, 99));
            assertThat(events.get(11)).isEqualTo(new Event.Exit(7, Event.ExitKind.SIGNAL, 11, 0x401400, 0, ""));
            assertThat(reader.head()).isEqualTo(reader.tail());
        }
    }

    @Test
    void skipsPaddingAndWrapsAround() throws Exception {
        Path ring = dir.resolve("r");
        try (var reader = RingReader.create(ring, 4096); var agent = new FakeAgent(ring)) {
            List<Event> seen = new ArrayList<>();
            long expected = 0;
            // 40-byte module records do not divide 4096, so the producer pads at the end of each lap.
            for (int i = 0; i < 1000; i++) {
                assertThat(agent.put(TestRecords.module(1, i, new byte[0], "m" + (i % 10)))).isTrue();
                expected++;
                if (i % 37 == 0) reader.poll((s, off, size, pos) -> seen.add(EventDecoder.decode(s, off, pos)));
            }
            reader.poll((s, off, size, pos) -> seen.add(EventDecoder.decode(s, off, pos)));
            assertThat(seen).hasSize((int) expected);
            for (int i = 0; i < seen.size(); i++) assertThat(((Event.Module) seen.get(i)).loadBias()).isEqualTo(i);
            assertThat(reader.head()).isGreaterThan(4096 * 5);
        }
    }

    @Test
    void fullRingCountsLostRecordsInsteadOfOverwriting() throws Exception {
        Path ring = dir.resolve("r");
        try (var reader = RingReader.create(ring, 4096); var agent = new FakeAgent(ring)) {
            int accepted = 0;
            for (int i = 0; i < 200; i++) if (agent.put(TestRecords.access(1, i, i, false, false))) accepted++;
            assertThat(accepted).isEqualTo(4096 / 24);
            assertThat(drain(reader)).hasSize(accepted);
            assertThat(reader.lost()).isEqualTo(200 - accepted);
        }
    }

    @Test
    void interleavedProducersKeepEachThreadsOrder() throws Exception {
        Path ring = dir.resolve("r");
        try (var reader = RingReader.create(ring, 1 << 12); var agent = new FakeAgent(ring)) {
            int perThread = 5000;
            List<Thread> producers = new ArrayList<>();
            for (int t = 1; t <= 3; t++) {
                int tid = t;
                producers.add(Thread.ofPlatform().start(() -> {
                    for (int i = 0; i < perThread; i++) {
                        byte[] rec = TestRecords.access(tid, i, (long) tid << 32 | i, false, false);
                        // The agent serializes producers with a lock; retry while the consumer catches up.
                        while (true) {
                            synchronized (agent) {
                                if (agent.put(rec)) break;
                                agent.setLost(0);
                            }
                            Thread.onSpinWait();
                        }
                    }
                }));
            }
            Map<Integer, Long> next = new HashMap<>();
            int total = 0;
            while (total < 3 * perThread) {
                total += reader.poll((s, off, size, pos) -> {
                    var a = (Event.Access) EventDecoder.decode(s, off, pos);
                    long want = next.getOrDefault(a.tid(), 0L);
                    assertThat(a.ip()).isEqualTo(want);
                    next.put(a.tid(), want + 1);
                });
            }
            for (Thread p : producers) p.join();
            assertThat(next).containsOnlyKeys(1, 2, 3).allSatisfy((k, v) -> assertThat(v).isEqualTo(perThread));
        }
    }

    @Test
    void deliverHandsFaultsByTheirFieldsAndOtherRecordsAsEvents() throws Exception {
        Path ring = dir.resolve("r");
        try (var reader = RingReader.create(ring, 1 << 16); var agent = new FakeAgent(ring)) {
            agent.append(TestRecords.hello(7, 7));
            agent.append(TestRecords.access(7, 0x401000, 0x404040, true, false));
            agent.append(TestRecords.alloc(7, 1, 0x401200, 0x4052a0, 24, 20));
            agent.append(TestRecords.access(8, 0x401008, 0x405000, false, true));
            agent.publish();
            List<String> seen = new ArrayList<>();
            List<Event> returned = new ArrayList<>();
            EventSink sink = new EventSink() {
                @Override public void accept(Event e) { seen.add(e.getClass().getSimpleName()); }

                @Override public void fault(int tid, long ip, long address, boolean write, boolean sameStep) {
                    seen.add("fault " + tid + " " + Long.toHexString(ip) + " " + Long.toHexString(address) + " " + write + " " + sameStep);
                }
            };
            reader.poll((s, off, size, pos) -> returned.add(EventDecoder.deliver(s, off, pos, sink)));
            assertThat(seen).containsExactly("Hello", "fault 7 401000 404040 true false", "Alloc", "fault 8 401008 405000 false true");
            assertThat(returned).hasSize(4);
            assertThat(returned.get(0)).isInstanceOf(Event.Hello.class);
            assertThat(returned.get(1)).isNull();
            assertThat(returned.get(2)).isInstanceOf(Event.Alloc.class);
            assertThat(returned.get(3)).isNull();
        }
    }

    @Test
    void corruptSizeNamesTheOffset() throws Exception {
        Path ring = dir.resolve("r");
        try (var reader = RingReader.create(ring, 4096); var agent = new FakeAgent(ring)) {
            agent.put(TestRecords.access(1, 1, 2, false, false));
            byte[] bad = TestRecords.access(1, 1, 2, false, false);
            bad[2] = 13;
            agent.putRaw(bad, 24);
            List<Event> got = new ArrayList<>();
            assertThatThrownBy(() -> reader.poll((s, off, size, pos) -> got.add(EventDecoder.decode(s, off, pos))))
                    .isInstanceOf(StreamFormatException.class)
                    .hasMessageContaining("offset 24").hasMessageContaining("size 13");
            assertThat(got).hasSize(1);
        }
    }

    @Test
    void unknownTypeAndOverrunsAreRejected() throws Exception {
        Path ring = dir.resolve("r");
        try (var reader = RingReader.create(ring, 4096); var agent = new FakeAgent(ring)) {
            byte[] bad = TestRecords.access(1, 1, 2, false, false);
            bad[0] = 99;
            agent.putRaw(bad, 24);
            assertThatThrownBy(() -> drain(reader)).hasMessage("corrupt event stream at offset 0: unknown record type 99");
        }
        try (var reader = RingReader.create(ring, 4096); var agent = new FakeAgent(ring)) {
            byte[] module = TestRecords.module(1, 0, new byte[0], "abc");
            module[20] = 100; // path_len beyond the record
            agent.putRaw(module, module.length);
            assertThatThrownBy(() -> drain(reader)).isInstanceOf(StreamFormatException.class).hasMessageContaining("overruns");
        }
        try (var reader = RingReader.create(ring, 4096); var agent = new FakeAgent(ring)) {
            agent.putRaw(TestRecords.access(1, 1, 2, false, false), 16); // tail inside the record
            assertThatThrownBy(() -> drain(reader)).hasMessageContaining("overruns the published data");
        }
    }

    @Test
    void openRejectsAFileThatIsNotARing() throws Exception {
        Path f = dir.resolve("junk");
        java.nio.file.Files.write(f, new byte[8192]);
        assertThatThrownBy(() -> RingReader.open(f)).isInstanceOf(StreamFormatException.class).hasMessageContaining("magic");
    }
}
