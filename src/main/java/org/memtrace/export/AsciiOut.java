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
                return putBytes(s.getBytes(StandardCharsets.UTF_8));
            }
            buf[pos++] = (byte) c;
        }
        return this;
    }

    private AsciiOut putBytes(byte[] bytes) throws IOException {
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

    /** Signed decimal. */
    AsciiOut dec(long v) throws IOException {
        if (v < 0) {
            if (v == Long.MIN_VALUE) return put(Long.toString(v));
            put('-');
            v = -v;
        }
        room(20);
        int start = pos;
        do {
            buf[pos++] = (byte) ('0' + v % 10);
            v /= 10;
        } while (v != 0);
        for (int i = start, j = pos - 1; i < j; i++, j--) {
            byte t = buf[i];
            buf[i] = buf[j];
            buf[j] = t;
        }
        return this;
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
