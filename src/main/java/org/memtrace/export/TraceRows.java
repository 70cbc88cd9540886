package org.memtrace.export;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.List;
import org.memtrace.analysis.AccessAnalysis;
import org.memtrace.analysis.DataName;
import org.memtrace.event.Event;
import org.memtrace.trace.Naming;
import org.memtrace.trace.TracedAccess;

/**
 * The trace as CSV, one row per access: a load or store is one row, a block fetch or store one row for its
 * whole range, a block copy two rows with the same sequence number (the source read, then the destination
 * written; {@code store} tells them apart). Names are those of the MadT symbolic line at that event.
 */
public final class TraceRows implements AccessAnalysis {

    /** A column and the SQL type the Parquet file gives it. */
    public record Column(String name, String sqlType) {}

    public static final List<Column> COLUMNS = List.of(
            new Column("seq", "UBIGINT"), new Column("kind", "VARCHAR"), new Column("store", "BOOLEAN"),
            new Column("address", "UBIGINT"), new Column("size", "UBIGINT"), new Column("ip", "UBIGINT"),
            new Column("instruction", "VARCHAR"), new Column("thread", "INTEGER"), new Column("region", "VARCHAR"),
            new Column("symbol", "VARCHAR"), new Column("offset", "UBIGINT"));

    /** Recent data names by address; names change only between accesses (see {@link #namesChanged}). */
    private static final int CACHE = 1 << 12;
    private final long[] cachedAddress = new long[CACHE];
    private final String[] cachedRegion = new String[CACHE];
    private final DataName[] cachedName = new DataName[CACHE];

    private final Naming naming;
    private final AsciiOut out;
    private long rows;

    public TraceRows(Naming naming, OutputStream out) throws IOException {
        this.naming = naming;
        this.out = new AsciiOut(out);
        for (int i = 0; i < COLUMNS.size(); i++) this.out.put(i == 0 ? "" : ",").put(COLUMNS.get(i).name());
        this.out.put('\n');
    }

    @Override
    public void access(long sequence, TracedAccess t) {
        row(sequence, t.store() ? 'S' : 'L', t.store(), t.address(), t.size(), t.ip(), t.tid());
    }

    @Override
    public void block(long sequence, Event.Block b) {
        switch (b.op()) {
            case COPY -> {
                row(sequence, 'Y', false, b.source(), b.length(), b.ip(), b.tid());
                row(sequence, 'Y', true, b.destination(), b.length(), b.ip(), b.tid());
            }
            case STORE -> row(sequence, 'W', true, b.destination(), b.length(), b.ip(), b.tid());
            case FETCH -> row(sequence, 'G', false, b.source(), b.length(), b.ip(), b.tid());
        }
    }

    @Override
    public void namesChanged() {
        Arrays.fill(cachedRegion, null);
    }

    private void row(long sequence, char kind, boolean write, long address, long size, long ip, int tid) {
        int slot = (int) ((address * 0x9E3779B97F4A7C15L) >>> 52);
        if (cachedRegion[slot] == null || cachedAddress[slot] != address) {
            cachedAddress[slot] = address;
            cachedRegion[slot] = naming.region(address);
            cachedName[slot] = DataName.of(naming.data(address));
        }
        DataName name = cachedName[slot];
        try {
            out.unsignedDec(sequence).put(',').put(kind).put(',').put(write ? "true" : "false").put(',')
                    .unsignedDec(address).put(',').unsignedDec(size).put(',').unsignedDec(ip).put(',');
            text(naming.code(ip)).put(',').dec(tid).put(',');
            text(cachedRegion[slot]).put(',');
            if (name.symbol() != null) text(name.symbol()).put(',').unsignedDec(name.offset());
            else out.put(',');
            out.put('\n');
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        rows++;
    }

    /** RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled. */
    private AsciiOut text(String s) throws IOException {
        boolean plain = true;
        for (int i = 0; i < s.length() && plain; i++) {
            char c = s.charAt(i);
            plain = c != ',' && c != '"' && c != '\n' && c != '\r';
        }
        return plain ? out.put(s) : out.put('"').put(s.replace("\"", "\"\"")).put('"');
    }

    public long rows() { return rows; }

    @Override
    public void finish() throws IOException {
        out.close();
    }
}
