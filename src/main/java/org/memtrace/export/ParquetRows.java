package org.memtrace.export;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntFunction;
import org.memtrace.analysis.Ending;
import org.memtrace.compress.ZstdCompressor;
import org.memtrace.trace.Naming;

/**
 * The rows of {@link NamedRows} as a Parquet file, written directly (no library): row groups of up to 2^20
 * rows, one column chunk per column and group. Each chunk is one data page (version 1), each page one zstd
 * frame (codec ZSTD, level -1, through libzstd; uncompressed when the library is missing);
 * the columns with few distinct values (kind, size, ip, instruction, thread, region, symbol) are
 * dictionary-encoded, with a dictionary page per chunk and the indices as one bit-packed run of 8, 16 or 32
 * bits each; seq, address and offset are PLAIN, store a PLAIN bitmap. symbol and offset are optional (null
 * where memtrace cannot name the address): their definition levels are one bit-packed run of 1-bit levels.
 * The footer is Thrift's compact protocol written by hand ({@link Bytes}). Unsigned columns carry the
 * converted type UINT_64, strings UTF8. No statistics, no page index: readers scan.
 *
 * <p>What it gets wrong: seq, address and offset are PLAIN longs left to zstd, where DELTA_BINARY_PACKED
 * would make seq nearly free before compression; a dictionary is kept even when nearly every value is
 * distinct (a program with millions of heap blocks gets a large symbol dictionary per row group).
 */
public final class ParquetRows extends NamedRows {
    static final int ROWS = 1 << 20;
    private static final byte[] MAGIC = "PAR1".getBytes(StandardCharsets.US_ASCII);
    private static final int BOOLEAN = 0, INT32 = 1, INT64 = 2, BYTE_ARRAY = 6;
    private static final int REQUIRED = 0, OPTIONAL = 1;
    private static final int PLAIN = 0, RLE = 3, RLE_DICTIONARY = 8;
    private static final int DATA_PAGE = 0, DICTIONARY_PAGE = 2;
    private static final int UTF8 = 0, UINT_64 = 14, NONE = -1;
    private static final int UNCOMPRESSED = 0, ZSTD = 6;
    /**
     * zstd's first fast level: on the 10^7-event bench trace 42 MB against 31 MB at level 1 (DuckDB's own
     * Snappy output: 118 MB), for a quarter less of the compression's CPU time, which is most of the writer's.
     */
    private static final int LEVEL = -1;

    /** What a column chunk's metadata in the footer says; {@code bytes} as stored, {@code raw} before compression. */
    private record Chunk(int type, boolean dictionary, String name, long values, long bytes, long raw, long dataPage,
                         long dictionaryPage) {}

    private final OutputStream out;
    /** Bytes of the file so far, and what they would be uncompressed. */
    private long position, rawPosition;
    private final Bytes page = new Bytes(1 << 16), header = new Bytes(256);
    /** Null: pages are written uncompressed. */
    private final ZstdCompressor zstd;
    private byte[] packed = new byte[0];
    private int packedSize;

    private final long[] seq = new long[ROWS], address = new long[ROWS], offset = new long[ROWS];
    /** store and "symbol is defined", one bit per row, LSB first. */
    private final byte[] stores = new byte[ROWS / 8], defined = new byte[ROWS / 8];
    private final Dictionary kind = new Dictionary(), size = new Dictionary(), ip = new Dictionary(),
            instruction = new Dictionary(), thread = new Dictionary(), region = new Dictionary(), symbol = new Dictionary();
    /** Rows in the current group, and those of them with a symbol (so with an offset). */
    private int rows, named;
    private long total;
    private final List<List<Chunk>> groups = new ArrayList<>();
    private final List<Long> groupRows = new ArrayList<>();
    private byte[][] utf8 = new byte[1024][];

    public ParquetRows(Naming naming, OutputStream out) throws IOException {
        super(naming);
        this.out = out;
        this.zstd = ZstdCompressor.load(LEVEL).orElse(null);
        write(MAGIC, MAGIC.length);
    }

    @Override
    void row(long sequence, char kind, boolean store, long address, long size, long ip, int instruction, int tid,
             int region, int symbol, long offset) {
        int r = rows;
        seq[r] = sequence;
        this.address[r] = address;
        if (store) stores[r >>> 3] |= (byte) (1 << (r & 7));
        this.kind.add(kind);
        this.size.add(size);
        this.ip.add(ip);
        this.instruction.add(instruction);
        this.thread.add(tid);
        this.region.add(region);
        if (symbol != NO_SYMBOL) {
            defined[r >>> 3] |= (byte) (1 << (r & 7));
            this.symbol.add(symbol);
            this.offset[named++] = offset;
        }
        if (++rows == ROWS) {
            try {
                flushGroup();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private void flushGroup() throws IOException {
        if (rows == 0) return;
        List<Chunk> chunks = new ArrayList<>();
        chunks.add(plainLongs("seq", seq, rows));
        chunks.add(dictionary("kind", BYTE_ARRAY, kind, false, letter -> new byte[] {(byte) letter}));
        chunks.add(booleans("store"));
        chunks.add(plainLongs("address", address, rows));
        chunks.add(dictionary("size", INT64, size, false, null));
        chunks.add(dictionary("ip", INT64, ip, false, null));
        chunks.add(dictionary("instruction", BYTE_ARRAY, instruction, false, this::utf8));
        chunks.add(dictionary("thread", INT32, thread, false, null));
        chunks.add(dictionary("region", BYTE_ARRAY, region, false, this::utf8));
        chunks.add(dictionary("symbol", BYTE_ARRAY, symbol, true, this::utf8));
        chunks.add(optionalLongs("offset"));
        groups.add(chunks);
        groupRows.add((long) rows);
        total += rows;
        rows = 0;
        named = 0;
        Arrays.fill(stores, (byte) 0);
        Arrays.fill(defined, (byte) 0);
        for (Dictionary d : List.of(kind, size, ip, instruction, thread, region, symbol)) d.reset();
    }

    private Chunk plainLongs(String name, long[] values, int n) throws IOException {
        page.clear();
        page.putLongs(values, n);
        long start = position, raw = rawPosition;
        dataPage(n, PLAIN);
        return new Chunk(INT64, false, name, n, position - start, rawPosition - raw, start, NONE);
    }

    private Chunk booleans(String name) throws IOException {
        page.clear();
        page.put(stores, 0, (rows + 7) / 8);
        long start = position, raw = rawPosition;
        dataPage(rows, PLAIN);
        return new Chunk(BOOLEAN, false, name, rows, position - start, rawPosition - raw, start, NONE);
    }

    private Chunk optionalLongs(String name) throws IOException {
        page.clear();
        definitionLevels();
        page.putLongs(offset, named);
        long start = position, raw = rawPosition;
        dataPage(rows, PLAIN);
        return new Chunk(INT64, false, name, rows, position - start, rawPosition - raw, start, NONE);
    }

    /** The RLE/bit-packed hybrid of 1-bit levels, one bit-packed run, after its 4-byte length. */
    private void definitionLevels() {
        int groups = (rows + 7) / 8;
        int at = page.size();
        page.putInt(0);
        page.varint((long) groups << 1 | 1);
        page.put(defined, 0, groups);
        page.putInt(at, page.size() - at - 4);
    }

    /** {@code text} gives a BYTE_ARRAY column's value of a key. */
    private Chunk dictionary(String name, int type, Dictionary d, boolean optional, IntFunction<byte[]> text) throws IOException {
        long start = position, raw = rawPosition;
        page.clear();
        for (int i = 0; i < d.size; i++) {
            long key = d.keys[i];
            switch (type) {
                case BYTE_ARRAY -> {
                    byte[] value = text.apply((int) key);
                    page.putInt(value.length);
                    page.put(value, 0, value.length);
                }
                case INT32 -> page.putInt((int) key);
                default -> page.putLong(key);
            }
        }
        compress();
        header.clear();
        header.structValue().i32(1, DICTIONARY_PAGE).i32(2, page.size()).i32(3, stored())
                .struct(7).i32(1, d.size).i32(2, PLAIN).end().end();
        flushPage();
        long data = position;
        page.clear();
        if (optional) definitionLevels();
        int bytes = d.size <= 1 << 8 ? 1 : d.size <= 1 << 16 ? 2 : 4;
        int groups = (d.count + 7) / 8;
        page.put(8 * bytes);
        page.varint((long) groups << 1 | 1);
        page.putNarrow(d.indices, d.count, bytes, 8 * groups);
        dataPage(rows, RLE_DICTIONARY);
        return new Chunk(type, true, name, rows, position - start, rawPosition - raw, data, start);
    }

    /** Writes {@link #page} as a data page of {@code values} values (rows, nulls included). */
    private void dataPage(int values, int encoding) throws IOException {
        compress();
        header.clear();
        header.structValue().i32(1, DATA_PAGE).i32(2, page.size()).i32(3, stored())
                .struct(5).i32(1, values).i32(2, encoding).i32(3, RLE).i32(4, RLE).end().end();
        flushPage();
    }

    /** Compresses {@link #page} into {@link #packed}, when there is a compressor. */
    private void compress() {
        if (zstd == null) return;
        int bound = zstd.bound(page.size());
        if (packed.length < bound) packed = new byte[Math.max(bound, 2 * packed.length)];
        packedSize = zstd.compress(page.array(), page.size(), packed);
    }

    /** The page's size in the file. */
    private int stored() { return zstd == null ? page.size() : packedSize; }

    /** Writes the header and the page as {@link #compress} left it. */
    private void flushPage() throws IOException {
        header.writeTo(out);
        if (zstd == null) page.writeTo(out);
        else out.write(packed, 0, packedSize);
        position += header.size() + stored();
        rawPosition += header.size() + page.size();
    }

    /** A name's UTF-8 by its id. */
    private byte[] utf8(int id) {
        if (id >= utf8.length) utf8 = Arrays.copyOf(utf8, Math.max(2 * utf8.length, id + 1));
        byte[] b = utf8[id];
        if (b == null) utf8[id] = b = text(id).getBytes(StandardCharsets.UTF_8);
        return b;
    }

    private void write(byte[] b, int n) throws IOException {
        out.write(b, 0, n);
        position += n;
    }

    @Override
    public String name() { return "parquet export"; }

    @Override
    public void finish(Ending ending) throws IOException {
        flushGroup();
        Bytes footer = new Bytes(1 << 12);
        footer.structValue().i32(1, 1);
        footer.list(2, Bytes.LIST_STRUCT, COLUMNS.size() + 1);
        footer.structValue().binary(4, bytes("schema")).i32(5, COLUMNS.size()).end();
        schema(footer, "seq", INT64, REQUIRED, UINT_64);
        schema(footer, "kind", BYTE_ARRAY, REQUIRED, UTF8);
        schema(footer, "store", BOOLEAN, REQUIRED, NONE);
        schema(footer, "address", INT64, REQUIRED, UINT_64);
        schema(footer, "size", INT64, REQUIRED, UINT_64);
        schema(footer, "ip", INT64, REQUIRED, UINT_64);
        schema(footer, "instruction", BYTE_ARRAY, REQUIRED, UTF8);
        schema(footer, "thread", INT32, REQUIRED, NONE);
        schema(footer, "region", BYTE_ARRAY, REQUIRED, UTF8);
        schema(footer, "symbol", BYTE_ARRAY, OPTIONAL, UTF8);
        schema(footer, "offset", INT64, OPTIONAL, UINT_64);
        footer.i64(3, total);
        footer.list(4, Bytes.LIST_STRUCT, groups.size());
        for (int g = 0; g < groups.size(); g++) {
            List<Chunk> chunks = groups.get(g);
            footer.structValue().list(1, Bytes.LIST_STRUCT, chunks.size());
            long bytes = 0;
            for (Chunk c : chunks) {
                bytes += c.raw();   // the row group states its data uncompressed
                footer.structValue().i64(2, c.dictionaryPage() == NONE ? c.dataPage() : c.dictionaryPage()).struct(3)
                        .i32(1, c.type());
                if (c.dictionary()) footer.list(2, Bytes.LIST_I32, 3).i32Value(PLAIN).i32Value(RLE).i32Value(RLE_DICTIONARY);
                else footer.list(2, Bytes.LIST_I32, 2).i32Value(PLAIN).i32Value(RLE);
                footer.list(3, Bytes.LIST_BINARY, 1).binaryValue(bytes(c.name()));
                footer.i32(4, zstd == null ? UNCOMPRESSED : ZSTD).i64(5, c.values()).i64(6, c.raw()).i64(7, c.bytes())
                        .i64(9, c.dataPage());
                if (c.dictionaryPage() != NONE) footer.i64(11, c.dictionaryPage());
                footer.end().end();
            }
            footer.i64(2, bytes).i64(3, groupRows.get(g)).end();
        }
        footer.binary(6, bytes("memtrace")).end();
        footer.writeTo(out);
        int length = footer.size();
        out.write(new byte[] {(byte) length, (byte) (length >>> 8), (byte) (length >>> 16), (byte) (length >>> 24)});
        out.write(MAGIC);
        out.close();
    }

    private static void schema(Bytes footer, String name, int type, int repetition, int converted) {
        footer.structValue().i32(1, type).i32(3, repetition).binary(4, bytes(name));
        if (converted != NONE) footer.i32(6, converted);
        footer.end();
    }

    private static byte[] bytes(String s) { return s.getBytes(StandardCharsets.UTF_8); }

    /**
     * One column's values in a row group as indices into the distinct values in the order first seen.
     * Consecutive rows often repeat a value: the last one is checked before the hash table.
     */
    private static final class Dictionary {
        final int[] indices = new int[ROWS];
        int count;
        long[] keys = new long[256];
        int size;
        /** Open addressing: index + 1 of the key in that slot, 0 for empty. */
        private int[] table = new int[512];
        private long lastKey;
        private int lastIndex = -1;

        void add(long key) {
            indices[count++] = key == lastKey && lastIndex >= 0 ? lastIndex : index(key);
        }

        private int index(long key) {
            int mask = table.length - 1;
            int s = (int) ((key * 0x9E3779B97F4A7C15L) >>> 32) & mask;
            while (table[s] != 0) {
                if (keys[table[s] - 1] == key) return remember(key, table[s] - 1);
                s = (s + 1) & mask;
            }
            if (size == keys.length) keys = Arrays.copyOf(keys, 2 * size);
            keys[size] = key;
            table[s] = ++size;
            if (2 * size > table.length) rehash();
            return remember(key, size - 1);
        }

        private int remember(long key, int index) {
            lastKey = key;
            lastIndex = index;
            return index;
        }

        private void rehash() {
            table = new int[2 * table.length];
            int mask = table.length - 1;
            for (int i = 0; i < size; i++) {
                int s = (int) ((keys[i] * 0x9E3779B97F4A7C15L) >>> 32) & mask;
                while (table[s] != 0) s = (s + 1) & mask;
                table[s] = i + 1;
            }
        }

        void reset() {
            count = 0;
            size = 0;
            lastIndex = -1;
            Arrays.fill(table, 0);
        }
    }
}
