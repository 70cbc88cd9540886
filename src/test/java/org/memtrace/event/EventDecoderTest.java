package org.memtrace.event;

import static org.assertj.core.api.Assertions.*;
import static org.memtrace.event.StreamLayout.*;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The two ways into the decoder, a stream's bytes and a .mtr record's words, must agree field for field. */
class EventDecoderTest {
    private static final List<byte[]> RECORDS = List.of(
            TestRecords.hello(7, 1234),
            TestRecords.access(7, 0x401000, 0x7ffd0010, true, true),
            TestRecords.block(7, 1, 0x401020, 0x5000, 0x6000, 96, 1),
            TestRecords.alloc(7, 1, 0x401040, 0x5555a000, 48, 40),
            TestRecords.alloc(7, 3, 0x401048, 0x5555b000, 200, 0x5555a000, 190),
            TestRecords.module(7, 0x555500000000L, new byte[] {1, 2, 3, 4, 5}, "/usr/lib/é.so"),
            TestRecords.mapping(7, 0x7f0000000000L, 0x7f0000004000L, 0x1000, 5, true, "/bin/a b"),
            TestRecords.range(7, true, 0x1000, 0x2000, 2, 3),
            TestRecords.thread(8, true, 7),
            TestRecords.control(7, false, 0x401060),
            TestRecords.exit(7, EXIT_SIGNAL, 11, 0x401070, 0xdead, "/bin/x"),
            TestRecords.stats(7, 1, 2, 3, 4, 5),
            TestRecords.fork(7, 99),
            TestRecords.writer(7, 5_000_000, 3, 40),
            TestRecords.writer(7, 0, 0, 15, true, 35_000_000, 15),
            TestRecords.allocWithStack(7, 1, 0x401040, 0x5555a000, 48, new long[] {40, 0, 0, 0, 0, 0}, 0x401100, 0x401200));

    @Test
    void wordsDecodeAsTheStreamBytesDo() {
        for (byte[] record : RECORDS) {
            // at an odd offset, as records lie in a saved stream without padding
            byte[] shifted = new byte[record.length + 3];
            System.arraycopy(record, 0, shifted, 3, record.length);
            Event fromBytes = EventDecoder.decode(MemorySegment.ofArray(shifted), 3, 0);
            long[] words = new long[(record.length + 7) / 8 + 2]; // a reused buffer is longer than its record
            MemorySegment.copy(MemorySegment.ofArray(record), 0, MemorySegment.ofArray(words), 0, record.length);
            assertThat(EventDecoder.decode(words, 0)).usingRecursiveComparison().isEqualTo(fromBytes);
            // inside a chunk's words, after other slots, with more after it
            long[] chunk = new long[words.length + 6];
            System.arraycopy(words, 0, chunk, 4, words.length - 2);
            Arrays.fill(chunk, 0, 4, -1L);
            Arrays.fill(chunk, chunk.length - 4, chunk.length, -1L);
            assertThat(EventDecoder.decode(chunk, 4, 0)).usingRecursiveComparison().isEqualTo(fromBytes);
        }
        var module = (Event.Module) EventDecoder.decode(MemorySegment.ofArray(RECORDS.get(5)), 0, 0);
        assertThat(module.path()).isEqualTo("/usr/lib/é.so");
        assertThat(module.buildId()).containsExactly(1, 2, 3, 4, 5);
        var alloc = (Event.Alloc) EventDecoder.decode(MemorySegment.ofArray(RECORDS.get(4)), 0, 0);
        assertThat(alloc.function()).isEqualTo(Event.AllocFunction.REALLOC);
        assertThat(alloc.args()).containsExactly(0x5555a000L, 190, 0, 0, 0, 0);
    }

    /** A 32-byte MT_WRITER (older runtimes) had a writer thread; a 48-byte one says whether one ran and what the threads wrote. */
    @Test
    void theWritersRecordOfBothSizes() {
        assertThat(EventDecoder.decode(MemorySegment.ofArray(TestRecords.writer(7, 5_000_000, 3, 40)), 0, 0))
                .isEqualTo(new Event.Writer(7, 5_000_000, 3, 40, false, 0, 0));
        assertThat(EventDecoder.decode(MemorySegment.ofArray(TestRecords.writer(7, 0, 0, 15, true, 35_000_000, 15)), 0, 0))
                .isEqualTo(new Event.Writer(7, 0, 0, 15, true, 35_000_000, 15));
        assertThat(EventDecoder.decode(MemorySegment.ofArray(TestRecords.writer(7, 1, 2, 3, false, 0, 0)), 0, 0))
                .isEqualTo(new Event.Writer(7, 1, 2, 3, false, 0, 0));
    }

    /** A 24-byte MT_FALLBACK (before punned jumps) says nothing of puns; a 48-byte one what became of them. */
    @Test
    void theFallbacksRecordOfBothSizes() {
        var old = (Event.Fallback) EventDecoder.decode(MemorySegment.ofArray(TestRecords.fallback(7, 13, 27)), 0, 0);
        assertThat(old).isEqualTo(new Event.Fallback(7, 13, 27, -1, -1, -1));
        assertThat(old.knowsPuns()).isFalse();
        var now = (Event.Fallback) EventDecoder.decode(MemorySegment.ofArray(TestRecords.fallback(7, 13, 27, 11345, 2403, 378)), 0, 0);
        assertThat(now).isEqualTo(new Event.Fallback(7, 13, 27, 11345, 2403, 378));
        assertThat(now.knowsPuns()).isTrue();
    }

    @Test
    void allocationStacksFollowTheEightyBytes() {
        var plain = (Event.Alloc) EventDecoder.decode(MemorySegment.ofArray(RECORDS.get(3)), 0, 0);
        assertThat(plain.callers()).isEmpty();
        byte[] record = RECORDS.getLast();
        var withStack = (Event.Alloc) EventDecoder.decode(MemorySegment.ofArray(record), 0, 0);
        assertThat(withStack.caller()).isEqualTo(0x401040);
        assertThat(withStack.args()).containsExactly(40, 0, 0, 0, 0, 0);
        assertThat(withStack.callers()).containsExactly(0x401100L, 0x401200L);
        long[] words = new long[record.length / 8];
        MemorySegment.copy(MemorySegment.ofArray(record), 0, MemorySegment.ofArray(words), 0, record.length);
        assertThat(((Event.Alloc) EventDecoder.decode(words, 0)).callers()).containsExactly(0x401100L, 0x401200L);
    }

    @Test
    void aVariablePartPastTheRecordIsAStreamErrorInBothWays() {
        byte[] record = TestRecords.mapping(7, 0x1000, 0x2000, 0, 5, false, "/lib");
        MemorySegment s = MemorySegment.ofArray(record);
        s.set(ValueLayout.JAVA_INT_UNALIGNED, 36, 1000); // the path's length
        long[] words = new long[(record.length + 7) / 8];
        MemorySegment.copy(s, 0, MemorySegment.ofArray(words), 0, record.length);
        assertThatThrownBy(() -> EventDecoder.decode(s, 0, 64)).isInstanceOf(StreamFormatException.class)
                .hasMessageContaining("overruns the record");
        assertThatThrownBy(() -> EventDecoder.decode(words, 64)).isInstanceOf(StreamFormatException.class)
                .hasMessageContaining("overruns the record");
    }
}
