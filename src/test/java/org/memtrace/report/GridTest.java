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

    /**
     * hash's trace: one access per event from event 2 to 11,046,561. The cells fold to 262,144 events a
     * column, and the page gets the 43 columns that hold accesses and the exact last event, not 64 columns
     * reaching 2 + 64 x 262,144 = 16,777,218.
     */
    @Test
    void theUsedSpanIsExactNotAPowerOfTwo() {
        Grid g = new Grid(2, 0);
        for (long seq = 2; seq <= 11_046_561; seq += 1) g.add(seq, (seq * 16) % (1 << 24), seq % 5 == 0);
        assertThat(g.sequencesPerColumn).isEqualTo(262_144);
        assertThat(g.lastSequence).isEqualTo(11_046_561);
        assertThat(g.usedColumns()).isEqualTo(43);
        assertThat(g.bytesPerRow).isEqualTo(1 << 19);
        assertThat(g.usedRows(0)).isEqualTo(32);
        int[] reads = g.trimmed(g.reads, 0), writes = g.trimmed(g.writes, 0);
        assertThat(reads).hasSize(43 * 32);
        assertThat(Arrays.stream(reads).asLongStream().sum() + Arrays.stream(writes).asLongStream().sum()).isEqualTo(11_046_560);
        // the last used column holds the events from 2 + 42 x 262,144 to 11,046,561
        long lastColumn = 0;
        for (int r = 0; r < 32; r++) lastColumn += reads[r * 43 + 42] + writes[r * 43 + 42];
        assertThat(lastColumn).isEqualTo(11_046_561 - (2 + 42 * 262_144) + 1);
    }

    /** Rows are cut at the largest offset of a global, at the size of a heap block. */
    @Test
    void rowsEndAtTheLargestOffsetOrTheSize() {
        Grid global = new Grid(0, 0);
        global.add(0, 0, false);
        global.add(1, 9, true);
        assertThat(global.usedRows(0)).isEqualTo(10);
        assertThat(global.usedColumns()).isEqualTo(2);
        assertThat(global.trimmed(global.writes, 0)).hasSize(20);
        assertThat(global.trimmed(global.writes, 0)[9 * 2 + 1]).isEqualTo(1);
        Grid block = new Grid(5, 528);
        block.add(5, 0, false);
        assertThat(block.usedRows(528)).isEqualTo(32);
        assertThat(block.usedColumns()).isEqualTo(1);
    }

    /** A scalar's accesses fall on one row: the report draws no map for it. */
    @Test
    void aScalarHasOneRowWithAccesses() {
        Grid scalar = new Grid(0, 0);
        for (int i = 0; i < 1000; i++) scalar.add(i, 0, i % 2 == 0);
        assertThat(scalar.rowsWithAccesses()).isEqualTo(1);
        Grid pair = new Grid(0, 16);
        pair.add(0, 0, false);
        pair.add(1, 8, false);
        assertThat(pair.rowsWithAccesses()).isEqualTo(2);
    }
}
