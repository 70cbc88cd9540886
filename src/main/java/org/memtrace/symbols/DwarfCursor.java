package org.memtrace.symbols;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * A bounds-checked little-endian reader of a DWARF section, shared by the line and the type readers: running
 * past the limit is a {@link DwarfException}, never an index error.
 */
final class DwarfCursor {
    private final ByteBuffer b;
    private final int sectionLimit;
    int position;
    int limit;

    DwarfCursor(ByteBuffer b) {
        this.b = b;
        this.sectionLimit = b.limit();
        this.limit = sectionLimit;
    }

    void limit(int newLimit) {
        limit = newLimit;
    }

    void restoreLimit() {
        limit = sectionLimit;
    }

    /** The position {@code length} bytes on, which must lie within the limit. */
    int end(long length, String what) throws DwarfException {
        if (length < 0 || length > limit - position) {
            throw new DwarfException(what + " of " + length + " bytes overruns the section (" + (limit - position) + " left)");
        }
        return position + (int) length;
    }

    private int take(int n) throws DwarfException {
        if (n > limit - position) throw new DwarfException("truncated at offset 0x" + Integer.toHexString(position));
        int p = position;
        position += n;
        return p;
    }

    void skip(long n) throws DwarfException {
        position = end(n, "field");
    }

    int u8() throws DwarfException {
        return b.get(take(1)) & 0xff;
    }

    int u16() throws DwarfException {
        return b.getShort(take(2)) & 0xffff;
    }

    long u32() throws DwarfException {
        return b.getInt(take(4)) & 0xffffffffL;
    }

    long u64() throws DwarfException {
        return b.getLong(take(8));
    }

    long uleb() throws DwarfException {
        long result = 0;
        int shift = 0;
        while (true) {
            int x = u8();
            if (shift < 64) result |= (long) (x & 0x7f) << shift;
            shift += 7;
            if ((x & 0x80) == 0) return result;
        }
    }

    long sleb() throws DwarfException {
        long result = 0;
        int shift = 0;
        int x;
        do {
            x = u8();
            if (shift < 64) result |= (long) (x & 0x7f) << shift;
            shift += 7;
        } while ((x & 0x80) != 0);
        if (shift < 64 && (x & 0x40) != 0) result |= -1L << shift;
        return result;
    }

    String cString() throws DwarfException {
        int end = position;
        while (end < limit && b.get(end) != 0) end++;
        if (end >= limit) throw new DwarfException("unterminated string at offset 0x" + Integer.toHexString(position));
        byte[] s = new byte[end - position];
        b.get(position, s);
        position = end + 1;
        return new String(s, StandardCharsets.UTF_8);
    }

    /** The NUL-terminated string at {@code offset} of a string section ({@code .debug_str}, {@code .debug_line_str}). */
    static String stringAt(ByteBuffer section, long offset, String name) throws DwarfException {
        if (offset < 0 || offset >= section.limit()) throw new DwarfException("string offset 0x" + Long.toHexString(offset) + " outside " + name);
        int end = (int) offset;
        while (end < section.limit() && section.get(end) != 0) end++;
        if (end >= section.limit()) throw new DwarfException("unterminated string in " + name);
        byte[] b = new byte[end - (int) offset];
        section.get((int) offset, b);
        return new String(b, StandardCharsets.UTF_8);
    }
}
