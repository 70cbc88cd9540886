package org.memtrace.symbols;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongPredicate;

/**
 * The rows of every unit of a {@code .debug_line}, grouped in sequences, and the global file table, which
 * {@link #build} makes one {@link LineTable} of: the sequences that start where the caller keeps code and
 * overlap none that starts lower, in address order; of rows at one address the last, of rows in a row
 * naming one file and line the first. Apart from {@link DwarfLines}, which decodes the line programs,
 * so that the choice of rows (which addr2line's answers decide) reads on its own.
 */
final class LineRows {
    private long[] addresses = new long[1024];
    private int[] files = new int[1024];
    private int[] lines = new int[1024];
    private int size;
    private int sequenceStart;
    /** Per sequence: first row, row count (end included), end address. */
    private final List<long[]> sequences = new ArrayList<>();
    private final List<String> fileNames = new ArrayList<>();
    private final Map<String, Integer> fileIndex = new HashMap<>();
    /** Names as compiled to where they lie; of two units naming one file from different directories, the first. */
    private final Map<String, String> locations = new HashMap<>();

    int fileIndex(String name, String location) {
        if (location != null) locations.putIfAbsent(name, location);
        return fileIndex.computeIfAbsent(name, n -> {
            fileNames.add(n);
            return fileNames.size() - 1;
        });
    }

    void add(long address, int file, long line) {
        if (size == addresses.length) {
            addresses = Arrays.copyOf(addresses, size * 2);
            files = Arrays.copyOf(files, size * 2);
            lines = Arrays.copyOf(lines, size * 2);
        }
        addresses[size] = address;
        // Line 0 marks code that comes from no line (DWARF 4, 6.2.2): it has no line, like a gap.
        files[size] = line == 0 ? LineTable.GAP : file;
        lines[size] = (int) line;
        size++;
    }

    void endSequence(long address) {
        add(address, LineTable.GAP, 0);
        sequences.add(new long[] {sequenceStart, size - sequenceStart, address});
        sequenceStart = size;
    }

    boolean sequenceClosed() {
        return sequenceStart == size;
    }

    LineTable build(LongPredicate keep) {
        List<long[]> kept = new ArrayList<>();
        for (long[] s : sequences) {
            int first = (int) s[0];
            int count = (int) s[1];
            if (count < 2 || addresses[first] >= s[2] || !keep.test(addresses[first])) continue;
            boolean ordered = true;
            for (int i = first + 1; i < first + count && ordered; i++) ordered = addresses[i] >= addresses[i - 1];
            // DWARF requires addresses to grow within a sequence; a sequence that goes back is dropped, not guessed at.
            if (ordered) kept.add(s);
        }
        kept.sort((a, b) -> Long.compare(addresses[(int) a[0]], addresses[(int) b[0]]));
        long[] outStarts = new long[size];
        int[] outFiles = new int[size];
        int[] outLines = new int[size];
        int n = 0;
        long coveredTo = Long.MIN_VALUE;
        for (long[] s : kept) {
            int first = (int) s[0];
            if (addresses[first] < coveredTo) continue;
            for (int i = first; i < first + (int) s[1]; i++) {
                if (n > 0 && outStarts[n - 1] == addresses[i]) {
                    n--;
                } else if (n > 0 && outFiles[n - 1] == files[i] && outLines[n - 1] == lines[i]) {
                    continue;
                }
                outStarts[n] = addresses[i];
                outFiles[n] = files[i];
                outLines[n] = lines[i];
                n++;
            }
            coveredTo = s[2];
        }
        return new LineTable(Arrays.copyOf(outStarts, n), Arrays.copyOf(outFiles, n), Arrays.copyOf(outLines, n),
                fileNames.toArray(String[]::new), Map.copyOf(locations), null);
    }
}
