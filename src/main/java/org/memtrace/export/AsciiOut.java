package org.memtrace.export;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * A buffered text sink for exports of 10⁸ lines: numbers are formatted straight into a byte buffer, with
 * no String per field. Text is UTF-8. A full buffer is written on a thread of its own while the next one
 * fills: the system calls that copy a gigabyte of CSV into the page cache do not stand in the formatting
 * thread's way. A failed write surfaces at the next flush or at {@link #close}.
 */
final class AsciiOut implements AutoCloseable {
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private final OutputStream out;
    private byte[] buf = new byte[1 << 20], spare = new byte[1 << 20];
    private int pos;
    /** Writes the buffers handed to it in order; its thread ends when idle, so an abandoned sink leaves none. */
    private final ExecutorService writer = new ThreadPoolExecutor(0, 1, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
            task -> Thread.ofPlatform().name("memtrace text writer").daemon().unstarted(task));
    /** The write of {@link #spare} under way, or null. */
    private Future<?> writing;

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

    /** Bytes {@code [from, from + length)} of a short array (at most the buffer's size). */
    AsciiOut put(byte[] bytes, int from, int length) throws IOException {
        room(length);
        System.arraycopy(bytes, from, buf, pos, length);
        pos += length;
        return this;
    }

    AsciiOut put(byte[] bytes) throws IOException {
        if (bytes.length > buf.length) {
            flush();
            awaitWrite();
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
        // Long division is slower than int division even by a constant: one per 8 digits above 2^31 (an
        // address: one), then 4 digits per step of int arithmetic, whose two pairs do not wait for each other.
        while (v > Integer.MAX_VALUE) {
            long q = v / 100_000_000;
            int r = (int) (v - 100_000_000 * q);
            v = q;
            i = four(r % 10_000, i);
            i = four(r / 10_000, i);
        }
        int w = (int) v;
        while (w >= 10_000) {
            int q = w / 10_000;
            i = four(w - 10_000 * q, i);
            w = q;
        }
        if (w >= 100) {
            int q = w / 100;
            i = pair(w - 100 * q, i);
            w = q;
        }
        if (w >= 10) {
            pair(w, i);
        } else {
            buf[i - 1] = (byte) ('0' + w);
        }
        pos = end;
        return this;
    }

    /** Writes exactly four digits of {@code r} (0..9999) ending before {@code i}; returns where they start. */
    private int four(int r, int i) {
        int high = r / 100;
        pair(r - 100 * high, i);
        pair(high, i - 2);
        return i - 4;
    }

    /** Writes the two digits of {@code r} (0..99) ending before {@code i}; returns where they start. */
    private int pair(int r, int i) {
        buf[i - 2] = PAIRS[2 * r];
        buf[i - 1] = PAIRS[2 * r + 1];
        return i - 2;
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

    /** Hands the buffer to the writer thread, once the one before is written, and goes on with the other. */
    void flush() throws IOException {
        awaitWrite();
        byte[] full = buf;
        int n = pos;
        writing = writer.submit(() -> {
            out.write(full, 0, n);
            return null;
        });
        buf = spare;
        spare = full;
        pos = 0;
    }

    private void awaitWrite() throws IOException {
        if (writing == null) return;
        try {
            writing.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while writing");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) throw io;
            if (e.getCause() instanceof RuntimeException r) throw r;
            throw new IOException(e.getCause());
        } finally {
            writing = null;
        }
    }

    @Override
    public void close() throws IOException {
        try {
            flush();
            awaitWrite();
        } finally {
            writer.shutdown();
        }
        out.close();
    }
}
