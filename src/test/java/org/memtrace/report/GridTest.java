package org.memtrace.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class GridTest {

    @Test
    void aHeapBlockSpreadsItsBytesOverTheRows() {
        Grid g = new Grid(100, 528);
        assertThat(g.bytesPerRow).isEqualTo(17);
        g.add(100, 0, false);
        g.add(101, 527, true);
        assertThat(g.reads[0]).isEqualTo(1);
        assertThat(g.writes[31 * Grid.COLUMNS + 1]).isEqualTo(1);
    }

    @Test
    void foldingKeepsEveryAccessAndDoublesTheSpans() {
        Grid g = new Grid(0, 0);
        Random random = new Random(7);
        long reads = 0, writes = 0;
        for (long seq = 0; seq < 10_000; seq++) {
            long offset = random.nextInt(1000);
            boolean write = random.nextBoolean();
            g.add(seq, offset, write);
            if (write) writes++;
            else reads++;
        }
        assertThat(Arrays.stream(g.reads).asLongStream().sum()).isEqualTo(reads);
        assertThat(Arrays.stream(g.writes).asLongStream().sum()).isEqualTo(writes);
        // 10,000 events over 64 columns: 256 per column; offsets below 1000 over 32 rows: 32 bytes per row
        assertThat(g.sequencesPerColumn).isEqualTo(256);
        assertThat(g.bytesPerRow).isEqualTo(32);
    }

    @Test
    void aCellHoldsExactlyTheAccessesOfItsSpan() {
        Grid g = new Grid(10, 64);
        for (long seq = 10; seq < 10 + 128; seq++) g.add(seq, (seq - 10) % 64, false);
        // 128 events: two per column; offsets 0..63 at 2 bytes per row, the first walk in columns 0..31
        assertThat(g.sequencesPerColumn).isEqualTo(2);
        assertThat(g.reads[0]).isEqualTo(2);
        assertThat(g.reads[31 * Grid.COLUMNS + 31]).isEqualTo(2);
        assertThat(g.reads[31 * Grid.COLUMNS + 32]).isZero();
        assertThat(g.reads[0 * Grid.COLUMNS + 32]).isEqualTo(2);
    }
}
