package org.memtrace.symbols;

import java.util.Arrays;
import java.util.Map;
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
    /** File names as compiled to where they lie, for those relative to an absolute compilation directory. */
    private final Map<String, String> locations;
    private final String problem;
    /**
     * For each bucket of {@code 1 << shift} addresses from the first row on, the row covering the bucket's
     * first address: a lookup searches only between two neighbouring entries, a few rows that share cache
     * lines, instead of the whole table (libc's has 140 000 rows).
     */
    private final int[] buckets;
    private final int shift;

    LineTable(long[] starts, int[] files, int[] lines, String[] fileNames, Map<String, String> locations, String problem) {
        this.starts = starts;
        this.files = files;
        this.lines = lines;
        this.fileNames = fileNames;
        this.locations = locations;
        this.problem = problem;
        int n = starts.length;
        long span = n == 0 ? 0 : starts[n - 1] - starts[0];
        // About four rows per bucket; an address range the rows cover only sparsely gets wider buckets.
        int s = 4;
        while (s < 62 && (span >>> s) > n / 4 + 1) s++;
        shift = s;
        buckets = new int[n == 0 ? 0 : (int) (span >>> s) + 2];
        int row = 0;
        for (int b = 0; b < buckets.length; b++) {
            long first = starts[0] + ((long) b << s);
            while (row + 1 < n && starts[row + 1] <= first) row++;
            buckets[b] = row;
        }
    }

    static LineTable unavailable(String problem) {
        return new LineTable(new long[0], new int[0], new int[0], new String[0], Map.of(), problem);
    }

    /** The line of the instruction at {@code address} (a link-time address); empty outside every sequence. */
    public Optional<SourceLine> lineOf(long address) {
        int i = rowOf(address);
        return i < 0 ? Optional.empty() : Optional.of(new SourceLine(fileNames[files[i]], lines[i]));
    }

    private int rowOf(long address) {
        // The last row always ends a sequence, so only addresses inside [first row, last row) have a line.
        if (starts.length == 0 || address < starts[0] || address >= starts[starts.length - 1]) return -1;
        int b = (int) ((address - starts[0]) >>> shift);
        int i = Arrays.binarySearch(starts, buckets[b], buckets[b + 1] + 1, address);
        if (i < 0) i = -i - 2;
        return files[i] != GAP ? i : -1;
    }

    /**
     * Where a file this table names lies: its name joined with the compilation directory when the name is
     * relative to it (the report's and cachesim's annotated source read it from there, whatever the current
     * directory); empty for an absolute name or when the table does not say (DWARF 4).
     */
    public Optional<String> location(String file) {
        return Optional.ofNullable(locations.get(file));
    }

    /** Row {@code i}'s start address, file name (null for a sequence's end) and line: run --check's table (DwarfLocals). */
    long rowStart(int i) { return starts[i]; }
    String rowFile(int i) { return files[i] == GAP ? null : fileNames[files[i]]; }
    int rowLine(int i) { return lines[i]; }

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
