package org.memtrace.report;

/**
 * One object's accesses as time (event sequence numbers) x offset, in a fixed number of cells: when an
 * access falls past the last column (row), neighbouring columns (rows) are added up pairwise and each cell
 * covers twice the span, so the grid keeps covering everything since the object's first access. The last
 * access and the largest offset are kept too: the page draws the exact span (first to last access, offset 0
 * to the largest), never the power-of-two span the folded cells happen to cover.
 */
final class Grid {
    static final int COLUMNS = 64, ROWS = 32;
    final long firstSequence;
    long sequencesPerColumn = 1;
    long bytesPerRow;
    long lastSequence, maxOffset;
    final int[] reads = new int[COLUMNS * ROWS];
    final int[] writes = new int[COLUMNS * ROWS];

    /** {@code size}: the object's bytes when known (a heap block), else 0 and the rows grow with the offsets seen. */
    Grid(long firstSequence, long size) {
        this.firstSequence = firstSequence;
        this.bytesPerRow = Math.max(1, (size + ROWS - 1) / ROWS);
        this.lastSequence = firstSequence;
    }

    void add(long sequence, long offset, boolean write) {
        lastSequence = Math.max(lastSequence, sequence);
        maxOffset = Math.max(maxOffset, offset);
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

    /** Columns up to the one holding the last access: the rest are empty (never padded to {@link #COLUMNS}). */
    int usedColumns() {
        return (int) ((lastSequence - firstSequence) / sequencesPerColumn) + 1;
    }

    /** Rows up to the one holding the largest offset, or covering {@code size} bytes when it is known. */
    int usedRows(long size) {
        long last = Math.max(maxOffset, size - 1);
        return (int) Math.min(ROWS, last / bytesPerRow + 1);
    }

    /** Rows holding at least one access: 1 for a scalar, few for a small struct (the report maps only objects with more). */
    int rowsWithAccesses() {
        int n = 0;
        for (int r = 0; r < ROWS; r++) {
            for (int c = 0; c < COLUMNS; c++) {
                if (reads[r * COLUMNS + c] + writes[r * COLUMNS + c] != 0) {
                    n++;
                    break;
                }
            }
        }
        return n;
    }

    /** {@code counts} cut to the used rows and columns, row by row: what the page embeds. */
    int[] trimmed(int[] counts, long size) {
        int columns = usedColumns(), rows = usedRows(size);
        int[] t = new int[columns * rows];
        for (int r = 0; r < rows; r++) System.arraycopy(counts, r * COLUMNS, t, r * columns, columns);
        return t;
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
