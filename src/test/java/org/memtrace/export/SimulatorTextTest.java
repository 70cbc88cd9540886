package org.memtrace.export;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.memtrace.analysis.Access;
import org.memtrace.analysis.Ending;
import org.memtrace.event.Event;

class SimulatorTextTest {
    private record TracedAccess(int tid, long ip, long address, int size, boolean store) {}

    private static final List<TracedAccess> ACCESSES = List.of(
            new TracedAccess(7, 0x401000, 0x404040, 4, false),   // a load
            new TracedAccess(7, 0x401010, 0x404080, 8, false),   // a read-modify-write: load then store
            new TracedAccess(7, 0x401010, 0x404080, 8, true),
            new TracedAccess(7, 0x401020, 0x404080, 8, false),   // a load and a store of other instructions
            new TracedAccess(7, 0x401024, 0x404080, 8, true),
            new TracedAccess(7, 0x401030, 0x7f0000000000L, 1, false)); // a load just before a block

    private static String export(ExportFormat format) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        SimulatorText text = new SimulatorText(format, bytes);
        long seq = 0;
        for (TracedAccess a : ACCESSES) text.access(Access.of(null, seq++, a.tid(), a.ip(), a.address(), a.size(), a.store()));
        text.block(seq, new Event.Block(7, Event.BlockOp.COPY, false, 0x401040, 0x405000, 0x406010, 16, 1));
        text.finish(Ending.offline(0, seq + 1, 0, java.util.Map.of()));
        return bytes.toString(StandardCharsets.US_ASCII);
    }

    @Test
    void lackeyMergesAReadModifyWriteIntoOneModifyLine() throws IOException {
        assertThat(export(ExportFormat.LACKEY)).isEqualTo("""
                 L 00404040,4
                 M 00404080,8
                 L 00404080,8
                 S 00404080,8
                 L 7f0000000000,1
                 L 00406010,16
                 S 00405000,16
                """);
    }

    @Test
    void pinatraceNamesTheInstructionAndEndsWithEof() throws IOException {
        assertThat(export(ExportFormat.PINATRACE)).isEqualTo("""
                0x401000: R 0x404040
                0x401010: R 0x404080
                0x401010: W 0x404080
                0x401020: R 0x404080
                0x401024: W 0x404080
                0x401030: R 0x7f0000000000
                0x401040: R 0x406010
                0x401040: W 0x405000
                #eof
                """);
    }

    @Test
    void extendedDinGivesKindAddressAndSizeInHex() throws IOException {
        assertThat(export(ExportFormat.XDIN)).isEqualTo("""
                r 404040 4
                r 404080 8
                w 404080 8
                r 404080 8
                w 404080 8
                r 7f0000000000 1
                r 406010 10
                w 405000 10
                """);
    }

    @Test
    void dinLabelsReadsZeroAndWritesOne() throws IOException {
        assertThat(export(ExportFormat.DIN)).isEqualTo("""
                0 404040
                0 404080
                1 404080
                0 404080
                1 404080
                0 7f0000000000
                0 406010
                1 405000
                """);
    }

    @Test
    void numbersFormatLikeTheJdk() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        AsciiOut out = new AsciiOut(bytes);
        long[] values = {0, 7, 10, 99, 100, 12345, -42, Long.MAX_VALUE, Long.MIN_VALUE, 1_000_000_000_000_000_000L};
        for (long v : values) out.dec(v).put(' ');
        out.unsignedDec(-1).put(' ').hex(0, 1).put(' ').hex(0xabc, 8).put(' ').hex(-1, 1);
        out.close();
        StringBuilder want = new StringBuilder();
        for (long v : values) want.append(v).append(' ');
        want.append(Long.toUnsignedString(-1)).append(" 0 00000abc ffffffffffffffff");
        assertThat(bytes.toString(StandardCharsets.US_ASCII)).isEqualTo(want.toString());
    }
}
