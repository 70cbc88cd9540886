package org.memtrace.export;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * A buffered text sink for exports of 10⁸ lines: numbers are formatted straight into a byte buffer, with
 * no String per field. Text is UTF-8.
 */
final class AsciiOut implements AutoCloseable {
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private final OutputStream out;
    private final byte[] buf = new byte[1 << 20];
    private int pos;

    AsciiOut(OutputStream out) { this.out = out; }

    private void room(int n) throws IOException {
        if (pos + n > buf.length) flush();
    }

    AsciiOut put(char c) throws IOException {
        room(1);
        buf[pos++] = (byte) c;
        return this;
    }

    AsciiOut put(String s) throws IOException {
        int n = s.length();
        room(n);
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c >= 0x80) {
                pos -= i;
                return put(s.getBytes(StandardCharsets.UTF_8));
            }
            buf[pos++] = (byte) c;
        }
        return this;
    }

    AsciiOut put(byte[] bytes) throws IOException {
        if (bytes.length > buf.length) {
            flush();
            out.write(bytes);
            return this;
        }
        room(bytes.length);
        System.arraycopy(bytes, 0, buf, pos, bytes.length);
        pos += bytes.length;
        return this;
    }

    /** Unsigned lowercase hexadecimal, zero-padded to at least {@code digits}. */
    AsciiOut hex(long v, int digits) throws IOException {
        int n = Math.max(digits, (64 - Long.numberOfLeadingZeros(v) + 3) / 4);
        if (n == 0) n = 1;
        room(n);
        for (int i = n - 1; i >= 0; i--) {
            buf[pos + i] = HEX[(int) (v & 15)];
            v >>>= 4;
        }
        pos += n;
        return this;
    }

    /** "00".."99": two digits per division. */
    private static final byte[] PAIRS = new byte[200];

    static {
        for (int i = 0; i < 100; i++) {
            PAIRS[2 * i] = (byte) ('0' + i / 10);
            PAIRS[2 * i + 1] = (byte) ('0' + i % 10);
        }
    }

    /** Signed decimal. */
    AsciiOut dec(long v) throws IOException {
        if (v < 0) {
            if (v == Long.MIN_VALUE) return put(Long.toString(v));
            put('-');
            v = -v;
        }
        int n = digits(v);
        room(n);
        int end = pos + n, i = end;
        // int division by a constant is a multiply and a shift, long division much slower: longs only above 2^31
        while (v > Integer.MAX_VALUE) {
            long q = v / 100;
            int r = (int) (v - 100 * q);
            v = q;
            buf[--i] = PAIRS[2 * r + 1];
            buf[--i] = PAIRS[2 * r];
        }
        int w = (int) v;
        while (w >= 100) {
            int q = w / 100;
            int r = w - 100 * q;
            w = q;
            buf[--i] = PAIRS[2 * r + 1];
            buf[--i] = PAIRS[2 * r];
        }
        if (w >= 10) {
            buf[--i] = PAIRS[2 * w + 1];
            buf[--i] = PAIRS[2 * w];
        } else {
            buf[--i] = (byte) ('0' + w);
        }
        pos = end;
        return this;
    }

    private static final long[] POWERS = new long[19];

    static {
        POWERS[0] = 1;
        for (int i = 1; i < POWERS.length; i++) POWERS[i] = 10 * POWERS[i - 1];
    }

    /** Decimal digits of a non-negative value: log10 from the bit length (1233/4096 ≈ log10 2), then one comparison. */
    private static int digits(long v) {
        int t = (64 - Long.numberOfLeadingZeros(v)) * 1233 >>> 12;
        return Math.max(1, t + (v >= POWERS[t] ? 1 : 0));
    }

    AsciiOut unsignedDec(long v) throws IOException {
        return v >= 0 ? dec(v) : put(Long.toUnsignedString(v));
    }

    void flush() throws IOException {
        out.write(buf, 0, pos);
        pos = 0;
    }

    @Override
    public void close() throws IOException {
        flush();
        out.close();
    }
}
