package org.memtrace.export;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.memtrace.analysis.Access;
import org.memtrace.analysis.Analysis;
import org.memtrace.analysis.Ending;
import org.memtrace.analysis.DataName;
import org.memtrace.event.Event;
import org.memtrace.trace.Naming;

/**
 * The trace as CSV, one row per access: a load or store is one row, a block fetch or store one row for its
 * whole range, a block copy two rows with the same sequence number (the source read, then the destination
 * written; {@code store} tells them apart). Names are those of the MadT symbolic line at that event.
 */
public final class TraceRows implements Analysis {

    /** A column and the SQL type the Parquet file gives it. */
    public record Column(String name, String sqlType) {}

    public static final List<Column> COLUMNS = List.of(
            new Column("seq", "UBIGINT"), new Column("kind", "VARCHAR"), new Column("store", "BOOLEAN"),
            new Column("address", "UBIGINT"), new Column("size", "UBIGINT"), new Column("ip", "UBIGINT"),
            new Column("instruction", "VARCHAR"), new Column("thread", "INTEGER"), new Column("region", "VARCHAR"),
            new Column("symbol", "VARCHAR"), new Column("offset", "UBIGINT"));

    /**
     * Recent names, ready to print (quoted where needed): data by address, code by instruction. Names
     * change only between accesses: {@link #namesChanged} starts a new generation, which makes every
     * entry stale at once (an allocation-heavy program has one per malloc).
     */
    private static final int CACHE = 1 << 16;
    private final long[] dataAddress = new long[CACHE];
    private final int[] dataGeneration = new int[CACHE];
    /** The region, symbol and offset fields of an address, with their commas, in UTF-8. */
    private final byte[][] dataFields = new byte[CACHE][];
    private final long[] codeAddress = new long[CACHE];
    private final int[] codeGeneration = new int[CACHE];
    private final byte[][] codeName = new byte[CACHE][];
    /** Starts at 1: the arrays' zeros are stale. */
    private int generation = 1;
    /**
     * The last heap block named, as a span of addresses with the same region and symbol: a walk over an array
     * is named once, not once per address ({@code spanEnd} 0 when none). An address in [spanStart, spanEnd)
     * is at offset address - spanBase of the span's object.
     */
    private long spanStart, spanEnd, spanBase;
    private byte[] spanFields;

    private final Naming naming;
    private final AsciiOut out;

    public TraceRows(Naming naming, OutputStream out) throws IOException {
        this.naming = naming;
        this.out = new AsciiOut(out);
        for (int i = 0; i < COLUMNS.size(); i++) this.out.put(i == 0 ? "" : ",").put(COLUMNS.get(i).name());
        this.out.put('\n');
    }

    @Override
    public void access(Access t) {
        row(t.sequence(), t.store() ? 'S' : 'L', t.store(), t.address(), t.size(), t.ip(), t.tid());
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
        generation++;
        spanEnd = 0;
    }

    private void row(long sequence, char kind, boolean write, long address, long size, long ip, int tid) {
        int codeSlot = (int) ((ip * 0x9E3779B97F4A7C15L) >>> 48);
        if (codeGeneration[codeSlot] != generation || codeAddress[codeSlot] != ip) {
            codeGeneration[codeSlot] = generation;
            codeAddress[codeSlot] = ip;
            codeName[codeSlot] = field(naming.code(ip)).getBytes(StandardCharsets.UTF_8);
        }
        try {
            out.unsignedDec(sequence).put(',').put(kind).put(',').put(write ? "true" : "false").put(',')
                    .unsignedDec(address).put(',').unsignedDec(size).put(',').unsignedDec(ip).put(',')
                    .put(codeName[codeSlot]).put(',').dec(tid).put(',');
            if (address >= spanStart && address < spanEnd) out.put(spanFields).unsignedDec(address - spanBase);
            else out.put(dataFields(address));
            out.put('\n');
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The region, symbol and offset fields of an address; a heap block's also start a span. */
    private byte[] dataFields(long address) {
        int slot = (int) ((address * 0x9E3779B97F4A7C15L) >>> 48);
        if (dataGeneration[slot] == generation && dataAddress[slot] == address) return dataFields[slot];
        DataName name = DataName.of(naming.object(address));
        String prefix = field(naming.region(address)) + "," + (name.symbol() == null ? "," : field(name.symbol()) + ",");
        String fields = name.symbol() == null ? prefix : prefix + Long.toUnsignedString(name.offset());
        long until = name.symbol() == null ? address + 1 : naming.sameObjectUntil(address);
        if (until > address + 1) {
            spanStart = address;
            spanEnd = until;
            spanBase = address - name.offset();
            spanFields = prefix.getBytes(StandardCharsets.UTF_8);
        }
        dataGeneration[slot] = generation;
        dataAddress[slot] = address;
        return dataFields[slot] = fields.getBytes(StandardCharsets.UTF_8);
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
    public void finish(Ending ending) throws IOException {
        out.close();
    }
}
