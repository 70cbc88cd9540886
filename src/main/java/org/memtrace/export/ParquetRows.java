package org.memtrace.export;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.IntFunction;
import org.memtrace.analysis.Ending;
import org.memtrace.compress.ZstdCompressor;
import org.memtrace.trace.Naming;

/**
 * The rows of {@link NamedRows} as a Parquet file, written directly (no library): row groups of up to 2^20
 * rows, one column chunk per column and group. Each chunk is one data page (version 1), each page one zstd
 * frame (codec ZSTD, level -1, through libzstd; uncompressed when the library is missing);
 * the columns with few distinct values (kind, size, ip, instruction, thread, region, symbol) are
 * dictionary-encoded, with a dictionary page per chunk and the indices of 8, 16 or 32 bits each in RLE runs
 * where a value repeats 8 times or more, bit-packed elsewhere; seq, address and offset are DELTA_BINARY_PACKED (a counter or a strided walk packs to a few bits
 * per row before zstd sees it), store a PLAIN bitmap. symbol and offset are optional (null
 * where memtrace cannot name the address): their definition levels are one bit-packed run of 1-bit levels.
 * The footer is Thrift's compact protocol written by hand ({@link Bytes}). Unsigned columns carry the
 * converted type UINT_64, strings UTF8. No statistics, no page index: readers scan.
 *
 * <p>What it gets wrong: a dictionary is kept even when nearly every value is distinct (a program with
 * millions of heap blocks gets a large symbol dictionary per row group); random addresses still cost their
 * full width in the delta encoding.
 */
public final class ParquetRows extends NamedRows {
    static final int ROWS = 1 << 20;
    private static final byte[] MAGIC = "PAR1".getBytes(StandardCharsets.US_ASCII);
    private static final int BOOLEAN = 0, INT32 = 1, INT64 = 2, BYTE_ARRAY = 6;
    private static final int REQUIRED = 0, OPTIONAL = 1;
    private static final int PLAIN = 0, RLE = 3, DELTA_BINARY_PACKED = 5, RLE_DICTIONARY = 8;
    private static final int DATA_PAGE = 0, DICTIONARY_PAGE = 2;
    private static final int UTF8 = 0, UINT_64 = 14, NONE = -1;
    private static final int UNCOMPRESSED = 0, ZSTD = 6;
    /**
     * zstd's first fast level: on the 10^7-event bench trace 42 MB against 31 MB at level 1 (DuckDB's own
     * Snappy output: 118 MB), for a quarter less of the compression's CPU time, which is most of the writer's.
     */
    private static final int LEVEL = -1;
    /** Page buffers in all: a row group's 18 pages and a few of the next, so the writer may fall a group behind. */
    private static final int PAGES = 24;

    /** A page handed to the writer thread: {@code values} is the dictionary's size for a dictionary page. */
    private record Page(Bytes bytes, int type, int values, int encoding) {}

    /**
     * What a column chunk's metadata in the footer says; {@code encoding} is its data page's, {@code bytes} as
     * stored, {@code raw} before compression.
     */
    private record Chunk(int type, boolean dictionary, int encoding, String name, long values, long bytes, long raw,
                         long dataPage, long dictionaryPage) {}

    private final OutputStream out;
    /** The page being built, taken from {@link #free}; null between pages. */
    private Bytes page;
    /** Page buffers: a column's pages go to the writer thread and come back once written. */
    private final BlockingQueue<Bytes> free = new ArrayBlockingQueue<>(PAGES);
    /**
     * Compresses and writes the pages, in order, on a thread of its own: compression is most of the writer's
     * CPU time, and the thread that interprets the trace need not wait for it. Everything below it touches
     * is its own until {@link #finish} has waited for it.
     */
    private final ExecutorService writer = Executors.newSingleThreadExecutor(
            task -> Thread.ofPlatform().name("memtrace parquet writer").daemon().unstarted(task));
    /** The writer's first failure; after it, it writes nothing more. */
    private volatile IOException failure;
    /** The writer's: bytes of the file so far, and what they would be uncompressed. */
    private long position, rawPosition;
    private final Bytes header = new Bytes(256);
    /** The writer's; null: pages are written uncompressed. */
    private final ZstdCompressor zstd;
    private byte[] packed = new byte[0];
    private final List<List<Chunk>> groups = new ArrayList<>();
    private List<Chunk> chunks = new ArrayList<>();
    private final List<Long> groupRows = new ArrayList<>();

    private final long[] seq = new long[ROWS], address = new long[ROWS], offset = new long[ROWS];
    /** store and "symbol is defined", one bit per row, LSB first. */
    private final byte[] stores = new byte[ROWS / 8], defined = new byte[ROWS / 8];
    private final Dictionary kind = new Dictionary(), size = new Dictionary(), ip = new Dictionary(),
            instruction = new Dictionary(), thread = new Dictionary(), region = new Dictionary(), symbol = new Dictionary();
    /** Rows in the current group, and those of them with a symbol (so with an offset). */
    private int rows, named;
    private long total;
    private byte[][] utf8 = new byte[1024][];

    public ParquetRows(Naming naming, OutputStream out) throws IOException {
        super(naming);
        this.out = out;
        this.zstd = ZstdCompressor.load(LEVEL).orElse(null);
        for (int i = 0; i < PAGES; i++) free.add(new Bytes(1 << 16));
        out.write(MAGIC);
        position = rawPosition = MAGIC.length;
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
        deltaLongs("seq", seq, rows);
        dictionary("kind", BYTE_ARRAY, kind, false, letter -> new byte[] {(byte) letter});
        booleans("store");
        deltaLongs("address", address, rows);
        dictionary("size", INT64, size, false, null);
        dictionary("ip", INT64, ip, false, null);
        dictionary("instruction", BYTE_ARRAY, instruction, false, this::utf8);
        dictionary("thread", INT32, thread, false, null);
        dictionary("region", BYTE_ARRAY, region, false, this::utf8);
        dictionary("symbol", BYTE_ARRAY, symbol, true, this::utf8);
        optionalLongs("offset");
        long groupSize = rows;
        writer.execute(() -> {
            groups.add(chunks);
            chunks = new ArrayList<>();
            groupRows.add(groupSize);
        });
        total += rows;
        rows = 0;
        named = 0;
        Arrays.fill(stores, (byte) 0);
        Arrays.fill(defined, (byte) 0);
        for (Dictionary d : List.of(kind, size, ip, instruction, thread, region, symbol)) d.reset();
    }

    private void deltaLongs(String name, long[] values, int n) throws IOException {
        newPage().putDeltas(values, n);
        column(INT64, name, null, dataPage(n, DELTA_BINARY_PACKED));
    }

    private void booleans(String name) throws IOException {
        newPage().put(stores, 0, (rows + 7) / 8);
        column(BOOLEAN, name, null, dataPage(rows, PLAIN));
    }

    private void optionalLongs(String name) throws IOException {
        newPage();
        definitionLevels();
        page.putDeltas(offset, named);
        column(INT64, name, null, dataPage(rows, DELTA_BINARY_PACKED));
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
    private void dictionary(String name, int type, Dictionary d, boolean optional, IntFunction<byte[]> text) throws IOException {
        newPage();
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
        Page dictionaryPage = new Page(page, DICTIONARY_PAGE, d.size, PLAIN);
        newPage();
        if (optional) definitionLevels();
        int bytes = d.size <= 1 << 8 ? 1 : d.size <= 1 << 16 ? 2 : 4;
        page.put(8 * bytes);
        d.encode(page, bytes);
        column(type, name, dictionaryPage, dataPage(rows, RLE_DICTIONARY));
    }

    /** A free page buffer, now {@link #page}; waits while the writer holds them all. */
    private Bytes newPage() throws IOException {
        IOException f = failure;
        if (f != null) throw f;
        try {
            page = free.take();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while writing the Parquet file");
        }
        page.clear();
        return page;
    }

    /** {@link #page} as a data page of {@code values} values (rows, nulls included). */
    private Page dataPage(int values, int encoding) {
        return new Page(page, DATA_PAGE, values, encoding);
    }

    /** Hands a column chunk's pages to the writer thread. */
    private void column(int type, String name, Page dictionaryPage, Page dataPage) {
        page = null;
        long values = rows;
        writer.execute(() -> {
            if (failure == null) {
                try {
                    long start = position, raw = rawPosition;
                    if (dictionaryPage != null) write(dictionaryPage);
                    long data = position;
                    write(dataPage);
                    chunks.add(new Chunk(type, dictionaryPage != null, dataPage.encoding(), name, values, position - start, rawPosition - raw, data,
                            dictionaryPage != null ? start : NONE));
                } catch (IOException e) {
                    failure = e;
                } catch (RuntimeException e) {
                    failure = new IOException(e.getMessage(), e);
                }
            }
            if (dictionaryPage != null) free.add(dictionaryPage.bytes());
            free.add(dataPage.bytes());
        });
    }

    /** On the writer thread: compresses a page, when there is a compressor, and writes it after its header. */
    private void write(Page p) throws IOException {
        Bytes bytes = p.bytes();
        int stored = bytes.size();
        if (zstd != null) {
            int bound = zstd.bound(bytes.size());
            if (packed.length < bound) packed = new byte[Math.max(bound, 2 * packed.length)];
            stored = zstd.compress(bytes.array(), bytes.size(), packed);
        }
        header.clear();
        header.structValue().i32(1, p.type()).i32(2, bytes.size()).i32(3, stored);
        if (p.type() == DICTIONARY_PAGE) header.struct(7).i32(1, p.values()).i32(2, PLAIN).end().end();
        else header.struct(5).i32(1, p.values()).i32(2, p.encoding()).i32(3, RLE).i32(4, RLE).end().end();
        header.writeTo(out);
        if (zstd == null) bytes.writeTo(out);
        else out.write(packed, 0, stored);
        position += header.size() + stored;
        rawPosition += header.size() + bytes.size();
    }

    /** A name's UTF-8 by its id. */
    private byte[] utf8(int id) {
        if (id >= utf8.length) utf8 = Arrays.copyOf(utf8, Math.max(2 * utf8.length, id + 1));
        byte[] b = utf8[id];
        if (b == null) utf8[id] = b = text(id).getBytes(StandardCharsets.UTF_8);
        return b;
    }

    @Override
    public String name() { return "parquet export"; }

    @Override
    public void finish(Ending ending) throws IOException {
        flushGroup();
        writer.close();   // waits for every page to be written
        if (failure != null) throw failure;
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
                else footer.list(2, Bytes.LIST_I32, 2).i32Value(c.encoding()).i32Value(RLE);
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
     * One column's values in a row group as indices into the distinct values in the order first seen, kept
     * as runs of equal indices: a loop repeats most columns' values for thousands of rows, and a run costs a
     * comparison and a count per row where an index per row was a store into a 4 MiB array per column.
     */
    private static final class Dictionary {
        long[] keys = new long[256];
        int size;
        /** Open addressing: index + 1 of the key in that slot, 0 for empty. */
        private int[] table = new int[512];
        /** Closed runs: runLength[r] rows of index runIndex[r]; then the open run, openLength rows of openIndex. */
        private int[] runIndex = new int[256], runLength = new int[256];
        private int runs;
        private long openKey;
        private int openIndex, openLength;
        /** {@link #encode}'s indices waiting to be bit-packed. */
        private int[] literals = new int[256];

        void add(long key) {
            if (key == openKey && openLength > 0) {
                openLength++;
                return;
            }
            int index = index(key);
            if (openLength > 0) close();
            openKey = key;
            openIndex = index;
            openLength = 1;
        }

        private void close() {
            if (runs == runIndex.length) {
                runIndex = Arrays.copyOf(runIndex, 2 * runs);
                runLength = Arrays.copyOf(runLength, 2 * runs);
            }
            runIndex[runs] = openIndex;
            runLength[runs++] = openLength;
            openLength = 0;
        }

        /**
         * The indices as Parquet's RLE/bit-packed hybrid of {@code 8 * bytes}-bit values: a run of 8 or more
         * equal indices is an RLE run, the others are bit-packed in groups of 8 (the last group padded).
         * A bit-packed stretch must hold a multiple of 8 values, so a run first tops up the group before it.
         */
        void encode(Bytes page, int bytes) {
            if (openLength > 0) close();
            int pending = 0;
            for (int r = 0; r < runs; r++) {
                int index = runIndex[r], n = runLength[r];
                if (pending % 8 != 0) {
                    int take = Math.min(n, 8 - pending % 8);
                    pending = literal(pending, index, take);
                    n -= take;
                }
                if (n >= 8) {
                    bitPacked(page, pending, bytes);
                    pending = 0;
                    page.varint((long) n << 1);
                    page.putLow(index, bytes);
                } else {
                    pending = literal(pending, index, n);
                }
            }
            bitPacked(page, pending, bytes);
            // a chunk without values (a column of nulls) still gets a run: an empty bit-packed one
            if (runs == 0) page.varint(1);
        }

        private int literal(int pending, int index, int n) {
            if (pending + n > literals.length) literals = Arrays.copyOf(literals, Math.max(2 * literals.length, pending + n));
            Arrays.fill(literals, pending, pending + n, index);
            return pending + n;
        }

        private void bitPacked(Bytes page, int n, int bytes) {
            if (n == 0) return;
            int groups = (n + 7) / 8;
            page.varint((long) groups << 1 | 1);
            page.putNarrow(literals, n, bytes, 8 * groups);
        }

        private int index(long key) {
            int mask = table.length - 1;
            int s = (int) ((key * 0x9E3779B97F4A7C15L) >>> 32) & mask;
            while (table[s] != 0) {
                if (keys[table[s] - 1] == key) return table[s] - 1;
                s = (s + 1) & mask;
            }
            if (size == keys.length) keys = Arrays.copyOf(keys, 2 * size);
            keys[size] = key;
            table[s] = ++size;
            if (2 * size > table.length) rehash();
            return size - 1;
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
            size = 0;
            runs = 0;
            openLength = 0;
            Arrays.fill(table, 0);
        }
    }
}
