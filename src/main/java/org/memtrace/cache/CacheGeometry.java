package org.memtrace.cache;

import java.util.Locale;

/**
 * The shape of one cache: total bytes, associativity, line bytes. Line size and set count are powers of
 * two (an address splits into tag, set and offset bits, as in hardware and in cachegrind).
 */
public record CacheGeometry(long size, int ways, int lineSize) {

    public CacheGeometry {
        if (lineSize < 1 || Integer.bitCount(lineSize) != 1)
            throw new IllegalArgumentException("line size " + lineSize + " is not a power of two");
        if (ways < 1) throw new IllegalArgumentException("associativity " + ways + " is not positive");
        if (size <= 0 || size % ((long) ways * lineSize) != 0)
            throw new IllegalArgumentException("size " + size + " is not a multiple of ways × line size (" + ways + " × " + lineSize + ")");
        long sets = size / ((long) ways * lineSize);
        if (Long.bitCount(sets) != 1 || sets > 1 << 30)
            throw new IllegalArgumentException("size " + size + " with " + ways + " ways of " + lineSize
                    + "-byte lines makes " + sets + " sets, not a power of two");
    }

    public int sets() { return (int) (size / ((long) ways * lineSize)); }

    public int lineBits() { return Integer.numberOfTrailingZeros(lineSize); }

    /** {@code SIZE:WAYS:LINE}, SIZE in bytes with an optional k, m or g suffix (binary): {@code 32k:8:64}. */
    public static CacheGeometry parse(String spec) {
        String[] f = spec.strip().split(":");
        if (f.length != 3) throw new IllegalArgumentException("'" + spec + "' is not SIZE:WAYS:LINE (e.g. 32k:8:64)");
        try {
            return new CacheGeometry(bytes(f[0]), Integer.parseInt(f[1]), Integer.parseInt(f[2]));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + spec + "' is not SIZE:WAYS:LINE (e.g. 32k:8:64)");
        }
    }

    private static long bytes(String s) {
        String t = s.toLowerCase(Locale.ROOT);
        int shift = switch (t.isEmpty() ? ' ' : t.charAt(t.length() - 1)) {
            case 'k' -> 10;
            case 'm' -> 20;
            case 'g' -> 30;
            default -> 0;
        };
        return Long.parseLong(shift == 0 ? t : t.substring(0, t.length() - 1)) << shift;
    }

    /** The form {@link #parse} reads, with the largest exact suffix. */
    @Override
    public String toString() {
        String s = size % (1L << 30) == 0 ? size / (1L << 30) + "g"
                : size % (1L << 20) == 0 ? size / (1L << 20) + "m"
                : size % 1024 == 0 ? size / 1024 + "k" : Long.toString(size);
        return s + ":" + ways + ":" + lineSize;
    }
}
