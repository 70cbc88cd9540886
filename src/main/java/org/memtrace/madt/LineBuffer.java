package org.memtrace.madt;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * The text trace's output bytes: lines are put into one growing array, numbers digit by digit and names as
 * bytes made once ({@link NameBytes}), and handed to the stream in chunks of about {@link #CHUNK} bytes. The
 * put methods check nothing: {@link #room} is called first with a bound of what follows. A write error is
 * said once through {@code problems}; nothing is written after it ({@link #failed}).
 */
final class LineBuffer {
    /** Bytes are handed to the stream in chunks of about this size. */
    static final int CHUNK = 1 << 16;

    private final OutputStream out;
    private final Consumer<String> problems;
    private byte[] buf = new byte[CHUNK + 4096];
    private int len;
    private boolean failed;

    LineBuffer(OutputStream out, Consumer<String> problems) {
        this.out = out;
        this.problems = problems;
    }

    /** Whether a write failed: the trace stops there. */
    boolean failed() { return failed; }

    /** Makes room for {@code n} more bytes; the put methods below rely on it and check nothing. */
    void room(int n) {
        if (len + n > buf.length) buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + n));
    }

    void put(byte b) {
        buf[len++] = b;
    }

    void put(byte[] b) {
        System.arraycopy(b, 0, buf, len, b.length);
        len += b.length;
    }

    /** Where the next byte goes: with {@link #cut}, bytes put only to be kept apart (a line's end made once). */
    int mark() { return len; }

    /** The bytes put since {@code mark}, taken back out of the output. */
    byte[] cut(int mark) {
        byte[] b = Arrays.copyOfRange(buf, mark, len);
        len = mark;
        return b;
    }

    /** At most 20 bytes. */
    void putDecimal(long v) {
        if (v < 0) {
            byte[] b = Long.toString(v).getBytes(StandardCharsets.US_ASCII);
            put(b);
            return;
        }
        if (v <= Integer.MAX_VALUE) {
            putDecimal((int) v);
            return;
        }
        // every line has three or four numbers: two digits per division, and the count without dividing
        int digits = 1;
        for (long p = 10; digits < 19 && v >= p; p *= 10) digits++;
        int i = len + digits;
        while (v >= 100) {
            long q = v / 100;
            int r = (int) (v - 100 * q);
            buf[--i] = (byte) ('0' + r % 10);
            buf[--i] = (byte) ('0' + r / 10);
            v = q;
        }
        if (v >= 10) {
            buf[--i] = (byte) ('0' + v % 10);
            v /= 10;
        }
        buf[--i] = (byte) ('0' + v);
        len += digits;
    }

    /**
     * A number below 2^31, nearly every one a line has (its sequence, an offset, size and thread): two digits
     * at a time from a table, each division by 100 a multiplication (exact below 4.9 * 10^9), which the
     * run's C1-compiled code would otherwise make a division instruction.
     */
    void putDecimal(int v) {
        int digits = v < 100_000 ? (v < 100 ? (v < 10 ? 1 : 2) : v < 1000 ? 3 : v < 10_000 ? 4 : 5)
                : v < 10_000_000 ? (v < 1_000_000 ? 6 : 7) : v < 100_000_000 ? 8 : v < 1_000_000_000 ? 9 : 10;
        int i = len + digits;
        while (v >= 100) {
            int q = (int) ((v * 1374389535L) >>> 37);
            int r = 2 * (v - 100 * q);
            buf[--i] = DIGIT_PAIRS[r + 1];
            buf[--i] = DIGIT_PAIRS[r];
            v = q;
        }
        if (v >= 10) {
            buf[--i] = DIGIT_PAIRS[2 * v + 1];
            buf[--i] = DIGIT_PAIRS[2 * v];
        } else {
            buf[--i] = (byte) ('0' + v);
        }
        len += digits;
    }

    /** The digits of the number {@link #putSequence} put last ({@code lastSequence}), {@code sequenceDigits} of them. */
    private final byte[] sequence = new byte[20];
    private int sequenceDigits;
    private long lastSequence = -1;

    /**
     * A line's number: {@link #putDecimal(long)}'s bytes, made from the last one's when it is the same or the
     * next (nearly every line's is): the digits counted up in place, a carry per ten lines on average, where
     * the 8-digit number of a run's 10^7th line took four divisions (bench/results/run-split.md).
     */
    void putSequence(long v) {
        if (v == lastSequence + 1 && v > 0) {
            byte[] d = sequence;
            int i = sequenceDigits - 1;
            while (i >= 0 && d[i] == '9') d[i--] = '0';
            if (i >= 0) {
                d[i]++;
            } else {
                // 99..9 + 1: one digit more, the rest already '0'
                d[0] = '1';
                d[sequenceDigits++] = '0';
            }
            lastSequence = v;
        } else if (v != lastSequence || v < 0) {
            int start = len;
            putDecimal(v);
            if (v >= 0) {
                sequenceDigits = len - start;
                System.arraycopy(buf, start, sequence, 0, sequenceDigits);
                lastSequence = v;
            } else {
                lastSequence = -1;
            }
            return;
        }
        System.arraycopy(sequence, 0, buf, len, sequenceDigits);
        len += sequenceDigits;
    }

    /** "00" to "99". */
    private static final byte[] DIGIT_PAIRS = new byte[200];

    static {
        for (int i = 0; i < 100; i++) {
            DIGIT_PAIRS[2 * i] = (byte) ('0' + i / 10);
            DIGIT_PAIRS[2 * i + 1] = (byte) ('0' + i % 10);
        }
    }

    /** {@code 0x} and the lower-case hex digits: at most 18 bytes. */
    void putHex(long v) {
        buf[len++] = '0';
        buf[len++] = 'x';
        for (int shift = (63 - Long.numberOfLeadingZeros(v | 1)) & ~3; shift >= 0; shift -= 4)
            buf[len++] = HEX_BYTES[(int) (v >>> shift) & 15];
    }

    private static final byte[] HEX_BYTES = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    /** Hands the bytes to the stream once a chunk's worth is there. */
    void lineDone() {
        if (len >= CHUNK) writeOut();
    }

    /** Hands every byte put so far to the stream. */
    void writeOut() {
        if (len == 0) return;
        try {
            out.write(buf, 0, len);
        } catch (IOException e) {
            fail(e);
        }
        len = 0;
    }

    /** Writes what is left (unless a write failed) and closes the stream. */
    void close() {
        if (!failed) writeOut();
        try {
            out.close();
        } catch (IOException e) {
            if (!failed) fail(e);
        }
    }

    private void fail(IOException e) {
        failed = true;
        problems.accept("cannot write the trace (" + e.getMessage() + "); it stops there");
    }
}
