package org.memtrace.analysis;

/**
 * A data address's name split into the object and the offset in it: {@code table+40} is {@code table} and
 * 40, {@code <malloc0013@f+45>+524} is {@code <malloc0013@f+45>} and 524, {@code [anon]+16} is {@code [anon]}
 * and 16. A bare hexadecimal name (memtrace knows nothing of the address) has no object: symbol null.
 */
public record DataName(String symbol, long offset) {

    public static final DataName UNKNOWN = new DataName(null, 0);

    /** Splits what {@link org.memtrace.trace.Naming#data} returned; the offset is the decimal after the last '+'. */
    public static DataName of(String data) {
        int plus = data.lastIndexOf('+');
        if (plus <= 0 || plus == data.length() - 1) return UNKNOWN;
        long offset = 0;
        for (int i = plus + 1; i < data.length(); i++) {
            char c = data.charAt(i);
            if (c < '0' || c > '9') return UNKNOWN;
            offset = offset * 10 + (c - '0');
        }
        return new DataName(data.substring(0, plus), offset);
    }

    /** The object as reports show it; addresses memtrace cannot name are grouped as {@code [unknown]}. */
    public String object() { return symbol == null ? "[unknown]" : symbol; }
}
