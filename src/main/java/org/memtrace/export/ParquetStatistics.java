package org.memtrace.export;

import java.util.Arrays;
import java.util.Comparator;

/**
 * A column chunk's statistics as Parquet's footer states them (the {@code Statistics} struct): the smallest
 * and largest value, PLAIN-encoded without length (8 little-endian bytes for INT64, 4 for INT32, 1 for
 * BOOLEAN, the bytes themselves for BYTE_ARRAY) and compared in the column's type order, which is unsigned for
 * the UINT_64 columns and byte-wise unsigned for strings; the nulls; and, for a dictionary column, the distinct
 * values (the dictionary's size, exact). {@code min} and {@code max} are null when the chunk holds only nulls.
 * Only the {@code min_value}/{@code max_value} fields are written: the deprecated {@code min}/{@code max}
 * had no defined order for unsigned columns.
 */
record ParquetStatistics(byte[] min, byte[] max, long nullCount, long distinct) {
    static final long NO_DISTINCT = -1;

    /** Writes the struct as field {@code field} of the column metadata being written. */
    void write(Bytes footer, int field) {
        footer.struct(field).i64(3, nullCount);
        if (distinct != NO_DISTINCT) footer.i64(4, distinct);
        if (max != null) footer.binary(5, max).binary(6, min);
        footer.end();
    }

    /** The statistics of {@code values[0, n)} as unsigned 64-bit numbers, with {@code nulls} nulls beside them. */
    static ParquetStatistics unsigned(long[] values, int n, long nulls) {
        if (n == 0) return new ParquetStatistics(null, null, nulls, NO_DISTINCT);
        long min = values[0], max = values[0];
        for (int i = 1; i < n; i++) {
            long v = values[i];
            if (Long.compareUnsigned(v, min) < 0) min = v;
            if (Long.compareUnsigned(v, max) > 0) max = v;
        }
        return new ParquetStatistics(littleEndian(min, 8), littleEndian(max, 8), nulls, NO_DISTINCT);
    }

    /** The statistics of the first {@code n} bits of a bitmap (LSB first) as booleans, false before true. */
    static ParquetStatistics bits(byte[] bitmap, int n) {
        if (n == 0) return new ParquetStatistics(null, null, 0, NO_DISTINCT);
        boolean anySet = false, anyClear = false;
        for (int i = 0; i < n && !(anySet && anyClear); i++) {
            if ((bitmap[i >>> 3] >>> (i & 7) & 1) != 0) anySet = true;
            else anyClear = true;
        }
        return new ParquetStatistics(new byte[] {(byte) (anyClear ? 0 : 1)}, new byte[] {(byte) (anySet ? 1 : 0)}, 0,
                NO_DISTINCT);
    }

    /** {@code v}'s low {@code bytes} bytes, least significant first: PLAIN's INT32 and INT64. */
    static byte[] littleEndian(long v, int bytes) {
        byte[] b = new byte[bytes];
        for (int i = 0; i < bytes; i++) b[i] = (byte) (v >>> 8 * i);
        return b;
    }

    private static long fromLittleEndian(byte[] b) {
        long v = 0;
        for (int i = b.length - 1; i >= 0; i--) v = v << 8 | b[i] & 0xFF;
        return v;
    }

    /** INT32 order on PLAIN-encoded values: signed. */
    static final Comparator<byte[]> INT32 = Comparator.comparingInt(b -> (int) fromLittleEndian(b));
    /** UINT_64 order on PLAIN-encoded values. */
    static final Comparator<byte[]> UINT64 = (a, b) -> Long.compareUnsigned(fromLittleEndian(a), fromLittleEndian(b));
    /** BYTE_ARRAY (UTF8) order: byte-wise, unsigned. */
    static final Comparator<byte[]> BYTES = Arrays::compareUnsigned;

    /** The smallest and largest of a dictionary's values, PLAIN-encoded, in one type's order. */
    static final class Extremes {
        private final Comparator<byte[]> order;
        private byte[] min, max;

        Extremes(Comparator<byte[]> order) {
            this.order = order;
        }

        void add(byte[] value) {
            if (min == null || order.compare(value, min) < 0) min = value;
            if (max == null || order.compare(value, max) > 0) max = value;
        }

        ParquetStatistics statistics(long nulls, long distinct) {
            return new ParquetStatistics(min, max, nulls, distinct);
        }
    }
}
