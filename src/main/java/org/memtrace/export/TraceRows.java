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
    private final long[] placeKey = new long[256];
    private final byte[][] place = new byte[256][];
    /** {@code ,K,true,} and {@code ,K,false,}: the fields between seq and address, by kind letter and store. */
    private final byte[][] kindStore = new byte[2 * 128][];
    /** The ip, instruction and thread fields with their commas for the last instruction: a loop repeats one. */
    private long codeIp;
    private int codeInstruction = -1, codeTid;
    private byte[] code;
    /**
     * The last sequence number written, as decimal digits in {@code sequenceDigits[sequenceFrom..]}: the next
     * row's is mostly the same (a block copy's two rows) or one more, a carry away from these digits.
     */
    private long lastSequence = -1;
    private final byte[] sequenceDigits = new byte[20];
    private int sequenceFrom = sequenceDigits.length;
    private final AsciiOut out;

    public TraceRows(Naming naming, OutputStream out) throws IOException {
        super(naming);
        this.out = new AsciiOut(out);
        for (int i = 0; i < COLUMNS.size(); i++) this.out.put(i == 0 ? "" : ",").put(COLUMNS.get(i));
        this.out.put('\n');
    }

    /** The allocation and free stacks are the Parquet export's alone ({@link NamedRows#PARQUET_COLUMNS}). */
    @Override
    void row(long sequence, char kind, boolean store, long address, long size, long ip, int instruction, int tid,
             int region, int symbol, long offset, int source, int stack, int freeStack) {
        try {
            sequence(sequence);
            out.put(kindStore(kind, store)).unsignedDec(address).put(',').unsignedDec(size).put(',')
                    .put(code(ip, instruction, tid)).put(place(region, symbol));
            if (symbol != NO_SYMBOL) out.unsignedDec(offset);
            out.put(',');
            if (source != NO_SYMBOL) out.put(field(source));
            out.put('\n');
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private byte[] kindStore(char kind, boolean store) {
        int k = (kind & 127) << 1 | (store ? 1 : 0);
        byte[] f = kindStore[k];
        if (f == null) kindStore[k] = f = ("," + kind + "," + store + ",").getBytes(StandardCharsets.US_ASCII);
        return f;
    }

    private void sequence(long s) throws IOException {
        if (s != lastSequence) {
            if (s == lastSequence + 1 && lastSequence >= 0) {
                int i = sequenceDigits.length - 1;
                while (i >= sequenceFrom && sequenceDigits[i] == '9') sequenceDigits[i--] = '0';
                if (i < sequenceFrom) sequenceDigits[sequenceFrom = i] = '1';
                else sequenceDigits[i]++;
            } else {
                String digits = Long.toUnsignedString(s);
                sequenceFrom = sequenceDigits.length - digits.length();
                for (int i = 0; i < digits.length(); i++) sequenceDigits[sequenceFrom + i] = (byte) digits.charAt(i);
            }
            lastSequence = s;
        }
        out.put(sequenceDigits, sequenceFrom, sequenceDigits.length - sequenceFrom);
    }

    private byte[] code(long ip, int instruction, int tid) {
        if (ip != codeIp || instruction != codeInstruction || tid != codeTid || code == null) {
            byte[] name = field(instruction);
            String fields = Long.toUnsignedString(ip) + "," + new String(name, StandardCharsets.UTF_8) + "," + tid + ",";
            code = fields.getBytes(StandardCharsets.UTF_8);
            codeIp = ip;
            codeInstruction = instruction;
            codeTid = tid;
        }
        return code;
    }

    /** The region and symbol fields with their commas ({@code [heap],<malloc…>,}), made once per pair. */
    private byte[] place(int region, int symbol) {
        long key = (long) region << 32 | (symbol & 0xFFFF_FFFFL);
        int slot = (int) ((key * 0x9E3779B97F4A7C15L) >>> 56);
        if (placeKey[slot] == key && place[slot] != null) return place[slot];
        byte[] r = field(region), s = symbol == NO_SYMBOL ? new byte[0] : field(symbol);
        byte[] p = new byte[r.length + s.length + 2];
        System.arraycopy(r, 0, p, 0, r.length);
        p[r.length] = ',';
        System.arraycopy(s, 0, p, r.length + 1, s.length);
        p[p.length - 1] = ',';
        placeKey[slot] = key;
        return place[slot] = p;
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
