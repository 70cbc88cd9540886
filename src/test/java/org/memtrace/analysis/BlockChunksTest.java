package org.memtrace.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.memtrace.event.Event;

class BlockChunksTest {
    private static List<String> chunks(Event.BlockOp op, long destination, long source, long length) {
        List<String> out = new ArrayList<>();
        BlockChunks.expand(new Event.Block(1, op, false, 0x401000, destination, source, length, 1), 64,
                (a, n, w) -> out.add((w ? "W " : "R ") + Long.toHexString(a) + "," + n));
        return out;
    }

    @Test
    void aStoreTouchesEachLineOfItsRangeOnce() {
        assertThat(chunks(Event.BlockOp.STORE, 0x1030, 0, 0x60)).containsExactly("W 1030,16", "W 1040,64", "W 1080,16");
        assertThat(chunks(Event.BlockOp.STORE, 0x1000, 0, 0)).isEmpty();
    }

    @Test
    void aFetchIsCutAtTheSourcesLines() {
        assertThat(chunks(Event.BlockOp.FETCH, 0, 0x2010, 0x40)).containsExactly("R 2010,48", "R 2040,16");
    }

    @Test
    void aCopyReadsThenWritesEachChunkCutAtTheDestinationsLines() {
        assertThat(chunks(Event.BlockOp.COPY, 0x1020, 0x2008, 0x50))
                .containsExactly("R 2008,32", "W 1020,32", "R 2028,48", "W 1040,48");
    }

    @Test
    void dataNamesSplitAtTheLastPlus() {
        assertThat(DataName.of("table+40")).isEqualTo(new DataName("table", 40));
        assertThat(DataName.of("<malloc0013@fMallocHandle+45>+524")).isEqualTo(new DataName("<malloc0013@fMallocHandle+45>", 524));
        assertThat(DataName.of("[anon]+16").object()).isEqualTo("[anon]");
        assertThat(DataName.of("0x7ffd1234")).isEqualTo(DataName.UNKNOWN);
        assertThat(DataName.UNKNOWN.object()).isEqualTo("[unknown]");
    }
}
