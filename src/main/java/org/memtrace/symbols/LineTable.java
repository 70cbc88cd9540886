package org.memtrace.symbols;

import java.util.Arrays;
import java.util.Optional;

/**
 * The address-to-line map of one module, in link-time (ELF virtual) addresses: sorted row starts, each row
 * reaching to the next; a row of file {@link #GAP} ends a sequence and covers addresses with no line. A table
 * that could not be built is empty and says why in {@link #problem}.
 */
public final class LineTable {

    static final int GAP = -1;

    private final long[] starts;
    private final int[] files;
    private final int[] lines;
    private final String[] fileNames;
    private final String problem;

    LineTable(long[] starts, int[] files, int[] lines, String[] fileNames, String problem) {
        this.starts = starts;
        this.files = files;
        this.lines = lines;
        this.fileNames = fileNames;
        this.problem = problem;
    }

    static LineTable unavailable(String problem) {
        return new LineTable(new long[0], new int[0], new int[0], new String[0], problem);
    }

    /** The line of the instruction at {@code address} (a link-time address); empty outside every sequence. */
    public Optional<SourceLine> lineOf(long address) {
        int i = rowOf(address);
        return i < 0 ? Optional.empty() : Optional.of(new SourceLine(fileNames[files[i]], lines[i]));
    }

    private int rowOf(long address) {
        int i = Arrays.binarySearch(starts, address);
        if (i < 0) i = -i - 2;
        return i >= 0 && files[i] != GAP ? i : -1;
    }

    /** Why the module has no lines: no .debug_line anywhere, or a corrupt one. */
    public Optional<String> problem() {
        return Optional.ofNullable(problem);
    }

    /** Rows, counting the ends of sequences: the table's size. */
    public int rows() {
        return starts.length;
    }

    public boolean isEmpty() {
        return starts.length == 0;
    }
}
