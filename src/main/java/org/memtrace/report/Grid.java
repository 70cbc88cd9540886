package org.memtrace.report;

/**
 * One object's accesses as time (event sequence numbers) x offset, in a fixed number of cells: when an
 * access falls past the last column (row), neighbouring columns (rows) are added up pairwise and each cell
 * covers twice the span, so the grid keeps covering everything since the object's first access.
 */
final class Grid {
    static final int COLUMNS = 64, ROWS = 32;
    final long firstSequence;
    long sequencesPerColumn = 1;
    long bytesPerRow;
    final int[] reads = new int[COLUMNS * ROWS];
    final int[] writes = new int[COLUMNS * ROWS];

    /** {@code size}: the object's bytes when known (a heap block), else 0 and the rows grow with the offsets seen. */
    Grid(long firstSequence, long size) {
        this.firstSequence = firstSequence;
        this.bytesPerRow = Math.max(1, (size + ROWS - 1) / ROWS);
    }

    void add(long sequence, long offset, boolean write) {
        long column = (sequence - firstSequence) / sequencesPerColumn;
        while (column >= COLUMNS) {
            foldColumns();
            column = (sequence - firstSequence) / sequencesPerColumn;
        }
        long row = offset / bytesPerRow;
        while (row >= ROWS) {
            foldRows();
            row = offset / bytesPerRow;
        }
        int cell = (int) row * COLUMNS + (int) column;
        if (write) writes[cell]++;
        else reads[cell]++;
    }

    private void foldColumns() {
        for (int r = 0; r < ROWS; r++) {
            for (int c = 0; c < COLUMNS; c++) {
                int to = r * COLUMNS + c;
                if (c < COLUMNS / 2) {
                    int from = r * COLUMNS + 2 * c;
                    reads[to] = reads[from] + reads[from + 1];
                    writes[to] = writes[from] + writes[from + 1];
                } else {
                    reads[to] = 0;
                    writes[to] = 0;
                }
            }
        }
        sequencesPerColumn *= 2;
    }

    private void foldRows() {
        for (int r = 0; r < ROWS; r++) {
            for (int c = 0; c < COLUMNS; c++) {
                int to = r * COLUMNS + c;
                if (r < ROWS / 2) {
                    int from = 2 * r * COLUMNS + c;
                    reads[to] = reads[from] + reads[from + COLUMNS];
                    writes[to] = writes[from] + writes[from + COLUMNS];
                } else {
                    reads[to] = 0;
                    writes[to] = 0;
                }
            }
        }
        bytesPerRow *= 2;
    }
}
