package org.memtrace.export;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.memtrace.analysis.Ending;
import org.memtrace.trace.Naming;

/**
 * The trace as CSV, one row per access ({@link NamedRows}): a load or store is one row, a block fetch or
 * store one row for its whole range, a block copy two rows with the same sequence number ({@code store}
 * tells them apart). Numbers are formatted straight into a byte buffer, each name once per trace.
 */
public final class TraceRows extends NamedRows {

    /** The CSV field of each name id ({@link #text}), quoted where needed, in UTF-8; null until first written. */
    private byte[][] fields = new byte[1024][];
    private final AsciiOut out;

    public TraceRows(Naming naming, OutputStream out) throws IOException {
        super(naming);
        this.out = new AsciiOut(out);
        for (int i = 0; i < COLUMNS.size(); i++) this.out.put(i == 0 ? "" : ",").put(COLUMNS.get(i));
        this.out.put('\n');
    }

    @Override
    void row(long sequence, char kind, boolean store, long address, long size, long ip, int instruction, int tid,
             int region, int symbol, long offset) {
        try {
            out.unsignedDec(sequence).put(',').put(kind).put(',').put(store ? "true" : "false").put(',')
                    .unsignedDec(address).put(',').unsignedDec(size).put(',').unsignedDec(ip).put(',')
                    .put(field(instruction)).put(',').dec(tid).put(',').put(field(region)).put(',');
            if (symbol == NO_SYMBOL) out.put(',');
            else out.put(field(symbol)).put(',').unsignedDec(offset);
            out.put('\n');
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private byte[] field(int id) {
        if (id >= fields.length) fields = Arrays.copyOf(fields, Math.max(2 * fields.length, id + 1));
        byte[] f = fields[id];
        if (f == null) fields[id] = f = field(text(id)).getBytes(StandardCharsets.UTF_8);
        return f;
    }

    /** RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled. */
    private static String field(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == ',' || c == '"' || c == '\n' || c == '\r') return '"' + s.replace("\"", "\"\"") + '"';
        }
        return s;
    }

    @Override
    public String name() { return "csv export"; }

    @Override
    public void finish(Ending ending) throws IOException {
        out.close();
    }
}
