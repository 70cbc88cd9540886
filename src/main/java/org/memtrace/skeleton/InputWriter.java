package org.memtrace.skeleton;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The emitted program's input file (docs/skeleton-c.md): LEB128 varints. A loop run's first field says how
 * the run ended, which is known only at its end, after its records: the records go to a scratch file next
 * to the input, each run's place in it and its end are kept ({@link #reserve}, {@link #end}), and {@link
 * #finish} writes the input with each end where its run begins. Runs end in the order they begin (one is
 * open at a time), so the ends are kept as one byte string.
 */
final class InputWriter implements AutoCloseable {
    private final Path input, body;
    private final OutputStream out;
    private long position;
    private long[] runAt = new long[256];
    private int runs, ended;
    private byte[] ends = new byte[1024];
    private int endsLength;

    InputWriter(Path input) throws IOException {
        this.input = input;
        this.body = Files.createTempFile(input.toAbsolutePath().getParent(), "." + input.getFileName() + ".", ".body");
        this.out = new BufferedOutputStream(Files.newOutputStream(body), 1 << 16);
    }

    void varint(long v) throws IOException {
        while ((v & ~0x7fL) != 0) {
            out.write((int) (v & 0x7f | 0x80));
            v >>>= 7;
            position++;
        }
        out.write((int) v);
        position++;
    }

    /** A run's end field goes here. */
    void reserve() {
        if (runs == runAt.length) runAt = Arrays.copyOf(runAt, 2 * runs);
        runAt[runs++] = position;
    }

    /** The end field of the oldest run without one: how it ended, and a value. */
    void end(int how, long value) {
        if (ended == runs) throw new IllegalStateException("a run ends that did not begin");
        ended++;
        if (ends.length - endsLength < 20) ends = Arrays.copyOf(ends, 2 * ends.length);
        endsLength = put(ends, endsLength, how);
        endsLength = put(ends, endsLength, value);
    }

    private static int put(byte[] b, int at, long v) {
        while ((v & ~0x7fL) != 0) {
            b[at++] = (byte) (v & 0x7f | 0x80);
            v >>>= 7;
        }
        b[at++] = (byte) v;
        return at;
    }

    /** Writes the input: the records with every run's end in its place. */
    void finish() throws IOException {
        out.close();
        if (ended != runs) throw new IllegalStateException("a run has no end");
        try (InputStream records = new BufferedInputStream(Files.newInputStream(body), 1 << 16);
             OutputStream to = new BufferedOutputStream(Files.newOutputStream(input), 1 << 16)) {
            byte[] buffer = new byte[1 << 16];
            long at = 0;
            int e = 0;
            for (int r = 0; r < runs; r++) {
                for (long n = runAt[r] - at; n > 0; ) {
                    int k = records.read(buffer, 0, (int) Math.min(buffer.length, n));
                    if (k < 0) throw new EOFException(body + " is shorter than written");
                    to.write(buffer, 0, k);
                    n -= k;
                }
                at = runAt[r];
                for (int fields = 0; fields < 2; fields++) {
                    do to.write(ends[e]); while ((ends[e++] & 0x80) != 0);
                }
            }
            records.transferTo(to);
        }
    }

    @Override
    public void close() throws IOException {
        out.close();
        Files.deleteIfExists(body);
    }
}
