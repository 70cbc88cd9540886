package org.memtrace.madt;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.memtrace.trace.Naming;

/**
 * Names as the text trace writes them ({@link #field}: escaped, in UTF-8), made once and kept. The stage's
 * names are cached strings, so the same object comes back access after access and is found by identity
 * before equality. A data name is kept by its access's address and found by identity alone; a new one
 * ({@code table+4987200} for a random walk over a table, where nearly every name is new) is made of its
 * base's bytes, kept per base, and the offset's digits, without hashing, comparing or escaping it whole. A
 * span (Access#span) keeps its base's bytes with the '+' and its region's.
 */
final class NameBytes {
    // as many as the stage keeps data names (analysis.Names): fewer would miss on every array walk
    private static final int NAME_SLOTS = 1 << 14;
    private static final int BASE_SLOTS = 1 << 10;
    private static final int SPAN_BITS = 12;

    /** Escaped UTF-8 bytes of recently written names, one name per slot by its hash. */
    private final String[] nameKeys = new String[NAME_SLOTS];
    private final byte[][] nameBytes = new byte[NAME_SLOTS][];
    /** Data names by their address's hash, and their bytes: the stage's object for the address while it holds. */
    private final String[] dataKeys = new String[NAME_SLOTS];
    private final byte[][] dataBytes = new byte[NAME_SLOTS][];
    /** A data name whose first {@code baseLengths[i]} characters are the base whose bytes {@code baseBytes[i]} holds. */
    private final String[] baseKeys = new String[BASE_SLOTS];
    private final int[] baseLengths = new int[BASE_SLOTS];
    private final byte[][] baseBytes = new byte[BASE_SLOTS][];
    /** Spans by their start's hash, by identity: their base's escaped bytes and '+', and their region's. */
    private final Naming.Span[] spanKeys = new Naming.Span[1 << SPAN_BITS];
    private final byte[][] spanBases = new byte[1 << SPAN_BITS][];
    private final byte[][] spanRegions = new byte[1 << SPAN_BITS][];

    /** {@link #field} of {@code name} in UTF-8, from the cache when the same name object was written lately. */
    byte[] name(String name) {
        int slot = name.hashCode() & (NAME_SLOTS - 1);
        String key = nameKeys[slot];
        // equal names from different lookups (the source line of every instruction of one line) share a slot
        if (key == name || name.equals(key)) return nameBytes[slot];
        byte[] b = field(name).getBytes(StandardCharsets.UTF_8);
        nameKeys[slot] = name;
        nameBytes[slot] = b;
        return b;
    }

    /**
     * {@link #field} of a data name in UTF-8: the same object as the one last written for an address with the
     * same slot has the same bytes (no hash of the name needed, and a freed block's new name is a new object).
     */
    byte[] data(long address, String name) {
        int slot = (int) ((address * 0x9E3779B97F4A7C15L) >>> 50) & (NAME_SLOTS - 1);
        if (dataKeys[slot] == name) return dataBytes[slot];
        byte[] b = dataField(name);
        dataKeys[slot] = name;
        dataBytes[slot] = b;
        return b;
    }

    /**
     * {@link #field} of a name in UTF-8; for {@code base+digits} the base's bytes from the cache and the
     * digits as they are (escaping works character by character and leaves '+' and digits alone).
     */
    private byte[] dataField(String name) {
        int n = name.length(), plus = n;
        while (plus > 0 && name.charAt(plus - 1) >= '0' && name.charAt(plus - 1) <= '9') plus--;
        if (plus == n || plus < 2 || name.charAt(plus - 1) != '+') return field(name).getBytes(StandardCharsets.UTF_8);
        int baseLength = plus - 1, h = baseLength;
        for (int i = 0; i < baseLength; i++) h = 31 * h + name.charAt(i);
        int slot = (h ^ h >>> 12) & (BASE_SLOTS - 1);
        String key = baseKeys[slot];
        byte[] base;
        if (key != null && baseLengths[slot] == baseLength && key.regionMatches(0, name, 0, baseLength)) {
            base = baseBytes[slot];
        } else {
            base = field(name.substring(0, baseLength)).getBytes(StandardCharsets.UTF_8);
            baseKeys[slot] = name;
            baseLengths[slot] = baseLength;
            baseBytes[slot] = base;
        }
        byte[] b = Arrays.copyOf(base, base.length + n - baseLength);
        for (int i = baseLength; i < n; i++) b[base.length + i - baseLength] = (byte) name.charAt(i);
        return b;
    }

    /** The slot of {@link #spanBase} and {@link #spanRegion} holding the span's bytes, made when it is new. */
    int span(Naming.Span span) {
        int slot = (int) ((span.start() * 0x9E3779B97F4A7C15L) >>> 64 - SPAN_BITS);
        Naming.Span key = spanKeys[slot];
        if (key == span) return slot;
        // the stage makes a span again when it asks again (another line of the same block): same names, same bytes
        if (key == null || !key.base().equals(span.base())) spanBases[slot] = (field(span.base()) + '+').getBytes(StandardCharsets.UTF_8);
        if (key == null || !key.region().equals(span.region())) spanRegions[slot] = name(span.region());
        spanKeys[slot] = span;
        return slot;
    }

    /** The span's base, escaped, and '+': the line adds the offset's digits. */
    byte[] spanBase(int slot) { return spanBases[slot]; }

    byte[] spanRegion(int slot) { return spanRegions[slot]; }

    /**
     * A name as one field (docs/trace-format.md, "Names"): '%', ',', space and control characters are
     * written as %XX (two upper-case hex digits of the byte), so no name can split a line or a field.
     * Anything printable else, UTF-8 included, is written as it is.
     */
    static String field(String name) {
        int i = 0;
        while (i < name.length() && !escaped(name.charAt(i))) i++;
        if (i == name.length()) return name;
        StringBuilder sb = new StringBuilder(name.length() + 8).append(name, 0, i);
        for (; i < name.length(); i++) {
            char c = name.charAt(i);
            if (escaped(c)) sb.append('%').append(HEX_DIGITS.charAt(c >> 4)).append(HEX_DIGITS.charAt(c & 15));
            else sb.append(c);
        }
        return sb.toString();
    }

    private static final String HEX_DIGITS = "0123456789ABCDEF";

    private static boolean escaped(char c) {
        return c <= ' ' || c == ',' || c == '%' || c == 0x7f;
    }
}
