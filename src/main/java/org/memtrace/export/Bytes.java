package org.memtrace.export;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * A growable little-endian byte buffer with the encodings a Parquet file is made of: fixed-width integers,
 * ULEB128 varints and the Thrift compact protocol of its headers and footer (field headers with id deltas,
 * zigzag integers, list headers; only the types the Parquet metadata uses).
 */
final class Bytes {
    private static final int T_TRUE = 1, T_FALSE = 2, T_I32 = 5, T_I64 = 6, T_BINARY = 8, T_LIST = 9, T_STRUCT = 12;
    /** Element types of a list, as its header writes them. */
    static final int LIST_I32 = T_I32, LIST_BINARY = T_BINARY, LIST_STRUCT = T_STRUCT;

    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN),
            INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN),
            SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);

    /** Values per block and per miniblock of {@link #putDeltas}. */
    private static final int DELTA_BLOCK = 128, MINIBLOCK = 32;

    private byte[] buf;
    private int size;
    /** Thrift: the last field id of each open struct, innermost last. */
    private short[] lastField = new short[16];
    private int depth;

    Bytes(int capacity) { buf = new byte[capacity]; }

    int size() { return size; }

    void clear() {
        size = 0;
        depth = 0;
    }

    void writeTo(OutputStream out) throws IOException { out.write(buf, 0, size); }

    /** The bytes written so far are its first {@link #size}; valid until the next write. */
    byte[] array() { return buf; }

    /** Room for n more bytes. */
    void room(int n) {
        if (size + n > buf.length) buf = Arrays.copyOf(buf, Math.max(2 * buf.length, size + n));
    }

    void put(int b) {
        room(1);
        buf[size++] = (byte) b;
    }

    void put(byte[] b, int from, int length) {
        room(length);
        System.arraycopy(b, from, buf, size, length);
        size += length;
    }

    void putInt(int v) {
        room(4);
        buf[size] = (byte) v;
        buf[size + 1] = (byte) (v >>> 8);
        buf[size + 2] = (byte) (v >>> 16);
        buf[size + 3] = (byte) (v >>> 24);
        size += 4;
    }

    void putLong(long v) {
        putInt((int) v);
        putInt((int) (v >>> 32));
    }

    /**
     * Parquet's DELTA_BINARY_PACKED encoding of {@code v[0, n)}: blocks of 128 values, each four miniblocks
     * of 32 deltas bit-packed at the miniblock's width after subtracting the block's smallest delta. Deltas
     * wrap as 64-bit integers, as readers compute them back. A walk with a fixed stride packs to nothing but
     * the block headers, a sequence number that counts up to about a bit per value.
     */
    void putDeltas(long[] v, int n) {
        varint(DELTA_BLOCK);
        varint(DELTA_BLOCK / MINIBLOCK);
        varint(n);
        varint(zigzag(n == 0 ? 0 : v[0]));
        for (int start = 1; start < n; start += DELTA_BLOCK) {
            int end = Math.min(start + DELTA_BLOCK, n);
            long min = Long.MAX_VALUE;
            for (int i = start; i < end; i++) min = Math.min(min, v[i] - v[i - 1]);
            varint(zigzag(min));
            int widths = size;
            room(DELTA_BLOCK / MINIBLOCK);
            size += DELTA_BLOCK / MINIBLOCK;
            for (int m = 0; m < DELTA_BLOCK / MINIBLOCK; m++) {
                int from = start + m * MINIBLOCK;
                int to = Math.min(from + MINIBLOCK, end);
                long or = 0;
                for (int i = from; i < to; i++) or |= v[i] - v[i - 1] - min;
                int width = 64 - Long.numberOfLeadingZeros(or);
                // a miniblock past the last value has no body; its width byte says 0
                buf[widths + m] = (byte) width;
                if (from < end) packMiniblock(v, from, to, min, width);
            }
        }
    }

    /** Deltas v[i] - v[i-1] - min for i in [from, to), then zeros to 32 values, {@code width} bits each, LSB first. */
    private void packMiniblock(long[] v, int from, int to, long min, int width) {
        room(4 * width + 8);
        int p = size;
        long acc = 0;
        int bits = 0;
        for (int k = 0; k < MINIBLOCK; k++) {
            int i = from + k;
            long x = i < to ? v[i] - v[i - 1] - min : 0;
            acc |= x << bits;
            bits += width;
            if (bits >= 64) {
                LONG.set(buf, p, acc);
                p += 8;
                bits -= 64;
                acc = bits == 0 ? 0 : x >>> (width - bits);
            }
        }
        // 32 values of any width fill whole 32-bit words: at most one is left
        if (bits > 0) INT.set(buf, p, (int) acc);
        size += 4 * width;
    }

    /** Ints from an array, each the low {@code bytes} (1, 2 or 4) bytes of the value, then zeros to {@code padTo} values. */
    void putNarrow(int[] v, int n, int bytes, int padTo) {
        room(bytes * padTo);
        int p = size;
        switch (bytes) {
            case 1 -> {
                for (int i = 0; i < n; i++) buf[p + i] = (byte) v[i];
            }
            case 2 -> {
                for (int i = 0; i < n; i++) SHORT.set(buf, p + 2 * i, (short) v[i]);
            }
            default -> {
                for (int i = 0; i < n; i++) INT.set(buf, p + 4 * i, v[i]);
            }
        }
        p += bytes * n;
        Arrays.fill(buf, p, p + bytes * (padTo - n), (byte) 0);
        size = p + bytes * (padTo - n);
    }

    /** The low {@code bytes} bytes of v, little-endian. */
    void putLow(int v, int bytes) {
        for (int i = 0; i < bytes; i++) put(v >>> 8 * i);
    }

    void putInt(int at, int v) {
        buf[at] = (byte) v;
        buf[at + 1] = (byte) (v >>> 8);
        buf[at + 2] = (byte) (v >>> 16);
        buf[at + 3] = (byte) (v >>> 24);
    }

    void varint(long v) {
        while ((v & ~0x7FL) != 0) {
            put((int) (v & 0x7F) | 0x80);
            v >>>= 7;
        }
        put((int) v);
    }

    // Thrift compact protocol

    /** Closes the innermost struct. */
    Bytes end() {
        put(0);
        depth--;
        return this;
    }

    private void field(int id, int type) {
        int delta = id - lastField[depth - 1];
        if (delta > 0 && delta <= 15) {
            put(delta << 4 | type);
        } else {
            put(type);
            varint(zigzag(id));
        }
        lastField[depth - 1] = (short) id;
    }

    private static long zigzag(long v) { return v << 1 ^ v >> 63; }

    Bytes i32(int id, int v) {
        field(id, T_I32);
        varint(zigzag(v));
        return this;
    }

    Bytes i64(int id, long v) {
        field(id, T_I64);
        varint(zigzag(v));
        return this;
    }

    Bytes bool(int id, boolean v) {
        field(id, v ? T_TRUE : T_FALSE);
        return this;
    }

    Bytes binary(int id, byte[] v) {
        field(id, T_BINARY);
        binaryValue(v);
        return this;
    }

    /** A struct-valued field; close it with {@link #end}. */
    Bytes struct(int id) {
        field(id, T_STRUCT);
        if (depth == lastField.length) lastField = Arrays.copyOf(lastField, 2 * depth);
        lastField[depth++] = 0;
        return this;
    }

    /** A list-valued field of {@code n} elements of the type given; the elements follow. */
    Bytes list(int id, int elementType, int n) {
        field(id, T_LIST);
        if (n < 15) {
            put(n << 4 | elementType);
        } else {
            put(0xF0 | elementType);
            varint(n);
        }
        return this;
    }

    Bytes i32Value(int v) {
        varint(zigzag(v));
        return this;
    }

    Bytes binaryValue(byte[] v) {
        varint(v.length);
        put(v, 0, v.length);
        return this;
    }

    /** A struct that is no field: the outermost, or an element of a list; close it with {@link #end}. */
    Bytes structValue() {
        if (depth == lastField.length) lastField = Arrays.copyOf(lastField, 2 * depth);
        lastField[depth++] = 0;
        return this;
    }
}
