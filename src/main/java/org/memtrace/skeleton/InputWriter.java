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
 * #finish} writes the input with each end where its run begins. A run may end after runs that began later
 * (those its body's calls made), so each run's end is kept by its number.
 */
final class InputWriter implements AutoCloseable {
    private final Path input, body;
    private final OutputStream out;
    private long position;
    private long[] runAt = new long[256];
    private long[] endHow = new long[256], endValue = new long[256];
    private boolean[] hasEnd = new boolean[256];
    private int runs, ended;

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

    /** A run's end field goes here; the run's number, for {@link #end}. */
    int reserve() {
        if (runs == runAt.length) {
            runAt = Arrays.copyOf(runAt, 2 * runs);
            endHow = Arrays.copyOf(endHow, 2 * runs);
            endValue = Arrays.copyOf(endValue, 2 * runs);
            hasEnd = Arrays.copyOf(hasEnd, 2 * runs);
        }
        runAt[runs] = position;
        return runs++;
    }

    /** The end field of run {@code run}: how it ended, and a value. */
    void end(int run, int how, long value) {
        if (run >= runs || hasEnd[run]) throw new IllegalStateException("a run ends that did not begin");
        hasEnd[run] = true;
        endHow[run] = how;
        endValue[run] = value;
        ended++;
    }

    /** Writes the input: the records with every run's end in its place. */
    void finish() throws IOException {
        out.close();
        if (ended != runs) throw new IllegalStateException("a run has no end");
        try (InputStream records = new BufferedInputStream(Files.newInputStream(body), 1 << 16);
             OutputStream to = new BufferedOutputStream(Files.newOutputStream(input), 1 << 16)) {
            byte[] buffer = new byte[1 << 16];
            long at = 0;
            for (int r = 0; r < runs; r++) {
                for (long n = runAt[r] - at; n > 0; ) {
                    int k = records.read(buffer, 0, (int) Math.min(buffer.length, n));
                    if (k < 0) throw new EOFException(body + " is shorter than written");
                    to.write(buffer, 0, k);
                    n -= k;
                }
                at = runAt[r];
                put(to, endHow[r]);
                put(to, endValue[r]);
            }
            records.transferTo(to);
        }
    }

    private static void put(OutputStream to, long v) throws IOException {
        while ((v & ~0x7fL) != 0) {
            to.write((int) (v & 0x7f | 0x80));
            v >>>= 7;
        }
        to.write((int) v);
    }

    @Override
    public void close() throws IOException {
        out.close();
        Files.deleteIfExists(body);
    }
}
