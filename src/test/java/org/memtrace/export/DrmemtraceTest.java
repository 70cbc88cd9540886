package org.memtrace.export;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;
import org.memtrace.analysis.Access;
import org.memtrace.analysis.Ending;
import org.memtrace.event.Event;

class DrmemtraceTest {
    /** One 12-byte trace_entry_t: type, size, addr. */
    private record Entry(int type, int size, long addr) {
        @Override
        public String toString() { return type + "/" + size + "/0x" + Long.toHexString(addr); }
    }

    private static Entry e(int type, int size, long addr) { return new Entry(type, size, addr); }

    private static Entry marker(int kind, long value) { return new Entry(28, kind, value); }

    /** The files the export wrote, by path, as raw (gunzipped) bytes. */
    private static Map<String, byte[]> export() throws IOException {
        Map<String, ByteArrayOutputStream> files = new LinkedHashMap<>();
        Drmemtrace d = new Drmemtrace(path -> {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            files.put(path, b);
            return b;
        }, new Drmemtrace.Code() {
            @Override
            public int lengthOf(long ip) { return ip == 0x401000 ? 0 : 3; }   // 0x401000 cannot be decoded

            @Override
            public int typeOf(long ip) { return ip == 0x401020 ? 15 : 10; }   // 0x401020 is a call through memory
        });
        d.access(Access.of(null, 0, 7, 0x401000, 0x404040, 4, false));     // a load
        d.access(Access.of(null, 1, 7, 0x401010, 0x404080, 8, false));     // a read-modify-write
        d.access(Access.of(null, 2, 7, 0x401010, 0x404080, 8, true));
        d.access(Access.of(null, 3, 9, 0x401020, 0x404100, 0, true));      // another thread, shape unknown
        d.access(Access.of(null, 4, 7, 0x401010, 0x404080, 8, false));     // the same instruction again
        d.block(5, new Event.Block(7, Event.BlockOp.COPY, false, 0x401040, 0x405000, 0x406010, 16, 1));
        d.finish(Ending.offline(0, 6, 0, Map.of()));
        Map<String, byte[]> raw = new LinkedHashMap<>();
        for (var f : files.entrySet())
            raw.put(f.getKey(), new GZIPInputStream(new ByteArrayInputStream(f.getValue().toByteArray())).readAllBytes());
        return raw;
    }

    private static List<Entry> entries(byte[] raw) {
        assertThat(raw.length % 12).isZero();
        ByteBuffer b = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
        List<Entry> list = new ArrayList<>();
        while (b.hasRemaining()) list.add(new Entry(b.getShort() & 0xffff, b.getShort() & 0xffff, b.getLong()));
        return list;
    }

    private static List<Entry> header(int tid, int pid) {
        return List.of(e(25, 0, 7), marker(12, 7), marker(9, 0x1c0), e(22, 4, tid), e(24, 4, pid), marker(10, 64),
                marker(20, 10_000_000), marker(18, 4096));
    }

    @Test
    void oneFilePerThreadUnderTraceInTheOrderOfTheirFirstAccess() throws IOException {
        assertThat(export().keySet()).containsExactly("trace/drmemtrace.memtrace.7.trace.gz", "trace/drmemtrace.memtrace.9.trace.gz");
    }

    @Test
    void eachInstructionIsFollowedByItsDataAndEachSwitchIsStamped() throws IOException {
        Map<String, byte[]> files = export();
        List<Entry> seven = new ArrayList<>(header(7, 7));
        seven.addAll(List.of(marker(2, 1), marker(3, -1),
                e(10, 1, 0x401000), e(0, 4, 0x404040),                       // undecodable: 1 byte long
                e(10, 3, 0x401010), e(0, 8, 0x404080), e(1, 8, 0x404080),    // load and store of one instruction
                marker(2, 3), marker(3, -1),                                 // back from thread 9
                e(10, 3, 0x401010), e(0, 8, 0x404080),
                e(10, 3, 0x401040), e(0, 16, 0x406010), e(1, 16, 0x405000),  // the copy's chunk: read, then write
                marker(11, 4), e(23, 4, 7), e(26, 0, 0)));
        assertThat(entries(files.get("trace/drmemtrace.memtrace.7.trace.gz"))).containsExactlyElementsOf(seven);
        List<Entry> nine = new ArrayList<>(header(9, 7));
        nine.addAll(List.of(marker(2, 2), marker(3, -1), e(15, 3, 0x401020), e(1, 1, 0x404100),   // size 0 as 1 byte
                marker(11, 1), e(23, 4, 9), e(26, 0, 0)));
        assertThat(entries(files.get("trace/drmemtrace.memtrace.9.trace.gz"))).containsExactlyElementsOf(nine);
    }

    @Test
    void theRecordsAreLittleEndianTwelveBytesEach() throws IOException {
        byte[] raw = export().get("trace/drmemtrace.memtrace.9.trace.gz");
        // the header: type 25 (TRACE_TYPE_HEADER), size 0, addr = version 7
        assertThat(java.util.Arrays.copyOf(raw, 12)).containsExactly(25, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0);
        // the filetype marker: type 28, marker kind 9, 0x1c0
        assertThat(java.util.Arrays.copyOfRange(raw, 24, 36)).containsExactly(28, 0, 9, 0, 0xc0 - 256, 1, 0, 0, 0, 0, 0, 0);
    }

    @Test
    void aTraceWithoutAccessesWritesNoFile() throws IOException {
        List<String> opened = new ArrayList<>();
        Drmemtrace d = new Drmemtrace(path -> {
            opened.add(path);
            return OutputStream.nullOutputStream();
        }, ip -> 3);
        d.finish(Ending.offline(0, 0, 0, Map.of()));
        assertThat(opened).isEmpty();
    }
}
