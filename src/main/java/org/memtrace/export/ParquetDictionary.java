package org.memtrace.export;

import java.util.Arrays;

/**
 * One column's values in a row group as indices into the distinct values in the order first seen, kept
 * as runs of equal indices: a loop repeats most columns' values for thousands of rows, and a run costs a
 * comparison and a count per row where an index per row was a store into a 4 MiB array per column.
 */
final class ParquetDictionary {
    long[] keys = new long[256];
    int size;
    /** Open addressing: index + 1 of the key in that slot, 0 for empty. */
    private int[] table = new int[512];
    /** Closed runs: runLength[r] rows of index runIndex[r]; then the open run, openLength rows of openIndex. */
    private int[] runIndex = new int[256], runLength = new int[256];
    private int runs;
    private long openKey;
    private int openIndex, openLength;
    /** {@link #encode}'s indices waiting to be bit-packed. */
    private int[] literals = new int[256];

    void add(long key) {
        if (key == openKey && openLength > 0) {
            openLength++;
            return;
        }
        int index = index(key);
        if (openLength > 0) close();
        openKey = key;
        openIndex = index;
        openLength = 1;
    }

    private void close() {
        if (runs == runIndex.length) {
            runIndex = Arrays.copyOf(runIndex, 2 * runs);
            runLength = Arrays.copyOf(runLength, 2 * runs);
        }
        runIndex[runs] = openIndex;
        runLength[runs++] = openLength;
        openLength = 0;
    }

    /**
     * The indices as Parquet's RLE/bit-packed hybrid of {@code 8 * bytes}-bit values: a run of 8 or more
     * equal indices is an RLE run, the others are bit-packed in groups of 8 (the last group padded).
     * A bit-packed stretch must hold a multiple of 8 values, so a run first tops up the group before it.
     */
    void encode(Bytes page, int bytes) {
        if (openLength > 0) close();
        int pending = 0;
        for (int r = 0; r < runs; r++) {
            int index = runIndex[r], n = runLength[r];
            if (pending % 8 != 0) {
                int take = Math.min(n, 8 - pending % 8);
                pending = literal(pending, index, take);
                n -= take;
            }
            if (n >= 8) {
                bitPacked(page, pending, bytes);
                pending = 0;
                page.varint((long) n << 1);
                page.putLow(index, bytes);
            } else {
                pending = literal(pending, index, n);
            }
        }
        bitPacked(page, pending, bytes);
        // a chunk without values (a column of nulls) still gets a run: an empty bit-packed one
        if (runs == 0) page.varint(1);
    }

    private int literal(int pending, int index, int n) {
        if (pending + n > literals.length) literals = Arrays.copyOf(literals, Math.max(2 * literals.length, pending + n));
        Arrays.fill(literals, pending, pending + n, index);
        return pending + n;
    }

    private void bitPacked(Bytes page, int n, int bytes) {
        if (n == 0) return;
        int groups = (n + 7) / 8;
        page.varint((long) groups << 1 | 1);
        page.putNarrow(literals, n, bytes, 8 * groups);
    }

    private int index(long key) {
        int mask = table.length - 1;
        int s = (int) ((key * 0x9E3779B97F4A7C15L) >>> 32) & mask;
        while (table[s] != 0) {
            if (keys[table[s] - 1] == key) return table[s] - 1;
            s = (s + 1) & mask;
        }
        if (size == keys.length) keys = Arrays.copyOf(keys, 2 * size);
        keys[size] = key;
        table[s] = ++size;
        if (2 * size > table.length) rehash();
        return size - 1;
    }

    private void rehash() {
        table = new int[2 * table.length];
        int mask = table.length - 1;
        for (int i = 0; i < size; i++) {
            int s = (int) ((keys[i] * 0x9E3779B97F4A7C15L) >>> 32) & mask;
            while (table[s] != 0) s = (s + 1) & mask;
            table[s] = i + 1;
        }
    }

    void reset() {
        size = 0;
        runs = 0;
        openLength = 0;
        Arrays.fill(table, 0);
    }
}
