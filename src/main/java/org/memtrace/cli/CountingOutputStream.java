package org.memtrace.cli;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;

/** The trace's stream, counting the bytes written for the progress line (read from its thread). */
final class CountingOutputStream extends FilterOutputStream {
    private volatile long written;

    CountingOutputStream(OutputStream out) {
        super(out);
    }

    long written() { return written; }

    @Override
    public void write(int b) throws IOException {
        out.write(b);
        written++;
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        out.write(b, off, len);
        written += len;
    }
}
