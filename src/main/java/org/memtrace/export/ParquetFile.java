package org.memtrace.export;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.function.IntFunction;
import org.memtrace.compress.ZstdCompressor;

/**
 * One Parquet file of {@link NamedRows}' rows, written directly (no library): row groups of up to 2^20
 * rows, one column chunk per column and group. Each chunk is one data page (version 1), each page one zstd
 * frame (codec ZSTD, level -1, through libzstd; uncompressed when the library is missing);
 * the columns with few distinct values (kind, size, ip, instruction, thread, region, symbol, source,
 * allocation_stack, free_stack) are
 * dictionary-encoded, with a dictionary page per chunk and the indices of 8, 16 or 32 bits each in RLE runs
 * where a value repeats 8 times or more, bit-packed elsewhere; seq, address and offset are
 * DELTA_BINARY_PACKED (a counter or a strided walk packs to a few bits per row before zstd sees it), store a
 * PLAIN bitmap. symbol, offset, source, allocation_stack and free_stack are optional (null where memtrace cannot
 * name the address, the instruction has no line, the address is in no heap block, or in a live one): their definition levels are one bit-packed run of 1-bit levels.
 *
 * <p>Every column chunk carries statistics (min_value and max_value in the column's type order, unsigned for
 * the UINT_64 columns, null_count, and distinct_count for the dictionary columns), and the footer declares
 * that order (column_orders, TYPE_DEFINED_ORDER), so an engine skips the row groups a filter on seq, address,
 * thread or symbol excludes. The footer carries the caller's key/value metadata. It is Thrift's compact
 * protocol written by hand ({@link Bytes}). No page index.
 *
 * <p>Pages are compressed and written by the executor the caller hands in (one thread, shared by the files
 * of a partitioned dataset); everything below it touches is its own until {@link #finish} has waited for it.
 *
 * <p>What it gets wrong: a dictionary is kept even when nearly every value is distinct (a program with
 * millions of heap blocks gets a large symbol dictionary per row group); random addresses still cost their
 * full width in the delta encoding.
 */
final class ParquetFile {
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
    /** Page buffers in all: a row group's 20 pages and a few of the next, so the writer may fall a group behind. */
    private static final int PAGES = 24;
    /** The first capacity of the row arrays: a partition of a few rows costs kilobytes, not 2^20 rows' worth. */
    private static final int FIRST_ROWS = 1 << 12;

    /** A page handed to the writer thread: {@code values} is the dictionary's size for a dictionary page. */
    private record Page(Bytes bytes, int type, int values, int encoding) {}

    /**
     * What a column chunk's metadata in the footer says; {@code encoding} is its data page's, {@code bytes} as
     * stored, {@code raw} before compression.
     */
    private record Chunk(int type, boolean dictionary, int encoding, String name, long values, long bytes, long raw,
                         long dataPage, long dictionaryPage, ParquetStatistics statistics) {}

    private final OutputStream out;
    private final IntFunction<byte[]> utf8;
    private final ExecutorService writer;
    /** The page being built, taken from {@link #free}; null between pages. */
    private Bytes page;
    /** Page buffers: a column's pages go to the writer thread and come back once written. */
    private final BlockingQueue<Bytes> free = new ArrayBlockingQueue<>(PAGES);
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

    private long[] seq = new long[FIRST_ROWS], address = new long[FIRST_ROWS], offset = new long[FIRST_ROWS];
    /** store, "symbol is defined", "source is defined", "allocation_stack is defined" and "free_stack is defined", one bit per row, LSB first. */
    private byte[] stores = new byte[FIRST_ROWS / 8], symbolDefined = new byte[FIRST_ROWS / 8],
            sourceDefined = new byte[FIRST_ROWS / 8], stackDefined = new byte[FIRST_ROWS / 8],
            freeStackDefined = new byte[FIRST_ROWS / 8];
    private final ParquetDictionary kind = new ParquetDictionary(), size = new ParquetDictionary(),
            ip = new ParquetDictionary(), instruction = new ParquetDictionary(), thread = new ParquetDictionary(),
            region = new ParquetDictionary(), symbol = new ParquetDictionary(), source = new ParquetDictionary(),
            stack = new ParquetDictionary(), freeStack = new ParquetDictionary();
    /** Rows in the current group, those of them with a symbol (so with an offset), a source line, a stack, a free stack. */
    private int rows, named, sourced, stacked, freeStacked;
    private long total;

    /**
     * A file on {@code out}; {@code utf8} gives a name id's text, {@code writer} runs the compression and
     * writes in the order given (the caller shuts it down).
     */
    ParquetFile(OutputStream out, IntFunction<byte[]> utf8, ExecutorService writer) throws IOException {
        this.out = out;
        this.utf8 = utf8;
        this.writer = writer;
        this.zstd = ZstdCompressor.load(LEVEL).orElse(null);
        for (int i = 0; i < PAGES; i++) free.add(new Bytes(1 << 12));
        out.write(MAGIC);
        position = rawPosition = MAGIC.length;
    }

    long rows() { return total + rows; }

    void row(long sequence, char kind, boolean store, long address, long size, long ip, int instruction, int tid,
             int region, int symbol, long offset, int source, int stack, int freeStack) throws IOException {
        int r = rows;
        if (r == seq.length) grow();
        seq[r] = sequence;
        this.address[r] = address;
        if (store) stores[r >>> 3] |= (byte) (1 << (r & 7));
        this.kind.add(kind);
        this.size.add(size);
        this.ip.add(ip);
        this.instruction.add(instruction);
        this.thread.add(tid);
        this.region.add(region);
        if (symbol != NamedRows.NO_SYMBOL) {
            symbolDefined[r >>> 3] |= (byte) (1 << (r & 7));
            this.symbol.add(symbol);
            this.offset[named++] = offset;
        }
        if (source != NamedRows.NO_SYMBOL) {
            sourceDefined[r >>> 3] |= (byte) (1 << (r & 7));
            this.source.add(source);
            sourced++;
        }
        if (stack != NamedRows.NO_SYMBOL) {
            stackDefined[r >>> 3] |= (byte) (1 << (r & 7));
            this.stack.add(stack);
            stacked++;
        }
        if (freeStack != NamedRows.NO_SYMBOL) {
            freeStackDefined[r >>> 3] |= (byte) (1 << (r & 7));
            this.freeStack.add(freeStack);
            freeStacked++;
        }
        if (++rows == ROWS) flushGroup();
    }

    private void grow() {
        int n = seq.length * 2;
        seq = Arrays.copyOf(seq, n);
        address = Arrays.copyOf(address, n);
        offset = Arrays.copyOf(offset, n);
        stores = Arrays.copyOf(stores, n / 8);
        symbolDefined = Arrays.copyOf(symbolDefined, n / 8);
        sourceDefined = Arrays.copyOf(sourceDefined, n / 8);
        stackDefined = Arrays.copyOf(stackDefined, n / 8);
        freeStackDefined = Arrays.copyOf(freeStackDefined, n / 8);
    }

    private void flushGroup() throws IOException {
        if (rows == 0) return;
        deltaLongs("seq", seq, rows);
        dictionary("kind", BYTE_ARRAY, kind, null, rows, letter -> new byte[] {(byte) letter});
        booleans("store");
        deltaLongs("address", address, rows);
        dictionary("size", INT64, size, null, rows, null);
        dictionary("ip", INT64, ip, null, rows, null);
        dictionary("instruction", BYTE_ARRAY, instruction, null, rows, utf8);
        dictionary("thread", INT32, thread, null, rows, null);
        dictionary("region", BYTE_ARRAY, region, null, rows, utf8);
        dictionary("symbol", BYTE_ARRAY, symbol, symbolDefined, named, utf8);
        optionalLongs("offset");
        dictionary("source", BYTE_ARRAY, source, sourceDefined, sourced, utf8);
        dictionary("allocation_stack", BYTE_ARRAY, stack, stackDefined, stacked, utf8);
        dictionary("free_stack", BYTE_ARRAY, freeStack, freeStackDefined, freeStacked, utf8);
        long groupSize = rows;
        writer.execute(() -> {
            groups.add(chunks);
            chunks = new ArrayList<>();
            groupRows.add(groupSize);
        });
        total += rows;
        rows = 0;
        named = 0;
        sourced = 0;
        stacked = 0;
        freeStacked = 0;
        Arrays.fill(stores, (byte) 0);
        Arrays.fill(symbolDefined, (byte) 0);
        Arrays.fill(sourceDefined, (byte) 0);
        Arrays.fill(stackDefined, (byte) 0);
        Arrays.fill(freeStackDefined, (byte) 0);
        for (ParquetDictionary d : List.of(kind, size, ip, instruction, thread, region, symbol, source, stack, freeStack)) d.reset();
    }

    private void deltaLongs(String name, long[] values, int n) throws IOException {
        newPage().putDeltas(values, n);
        column(INT64, name, null, dataPage(n, DELTA_BINARY_PACKED), ParquetStatistics.unsigned(values, n, 0));
    }

    private void booleans(String name) throws IOException {
        newPage().put(stores, 0, (rows + 7) / 8);
        column(BOOLEAN, name, null, dataPage(rows, PLAIN), ParquetStatistics.bits(stores, rows));
    }

    private void optionalLongs(String name) throws IOException {
        newPage();
        definitionLevels(symbolDefined);
        page.putDeltas(offset, named);
        column(INT64, name, null, dataPage(rows, DELTA_BINARY_PACKED), ParquetStatistics.unsigned(offset, named, rows - named));
    }

    /** The RLE/bit-packed hybrid of 1-bit levels, one bit-packed run, after its 4-byte length. */
    private void definitionLevels(byte[] defined) {
        int groups = (rows + 7) / 8;
        int at = page.size();
        page.putInt(0);
        page.varint((long) groups << 1 | 1);
        page.put(defined, 0, groups);
        page.putInt(at, page.size() - at - 4);
    }

    /**
     * A dictionary-encoded column; {@code defined} is an optional column's bitmap of non-null rows (null for
     * a required column), {@code present} its non-null rows, {@code text} gives a BYTE_ARRAY column's value
     * of a key.
     */
    private void dictionary(String name, int type, ParquetDictionary d, byte[] defined, int present, IntFunction<byte[]> text)
            throws IOException {
        newPage();
        ParquetStatistics.Extremes extremes = switch (type) {
            case BYTE_ARRAY -> new ParquetStatistics.Extremes(ParquetStatistics.BYTES);
            case INT32 -> new ParquetStatistics.Extremes(ParquetStatistics.INT32);
            default -> new ParquetStatistics.Extremes(ParquetStatistics.UINT64);
        };
        for (int i = 0; i < d.size; i++) {
            long key = d.keys[i];
            byte[] value = switch (type) {
                case BYTE_ARRAY -> text.apply((int) key);
                case INT32 -> ParquetStatistics.littleEndian(key, 4);
                default -> ParquetStatistics.littleEndian(key, 8);
            };
            if (type == BYTE_ARRAY) page.putInt(value.length);
            page.put(value, 0, value.length);
            extremes.add(value);
        }
        Page dictionaryPage = new Page(page, DICTIONARY_PAGE, d.size, PLAIN);
        newPage();
        if (defined != null) definitionLevels(defined);
        int bytes = d.size <= 1 << 8 ? 1 : d.size <= 1 << 16 ? 2 : 4;
        page.put(8 * bytes);
        d.encode(page, bytes);
        column(type, name, dictionaryPage, dataPage(rows, RLE_DICTIONARY), extremes.statistics(rows - present, d.size));
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
    private void column(int type, String name, Page dictionaryPage, Page dataPage, ParquetStatistics statistics) {
        page = null;
        long values = rows;
        writer.execute(() -> {
            if (failure == null) {
                try {
                    long start = position, raw = rawPosition;
                    if (dictionaryPage != null) write(dictionaryPage);
                    long data = position;
                    write(dataPage);
                    chunks.add(new Chunk(type, dictionaryPage != null, dataPage.encoding(), name, values, position - start,
                            rawPosition - raw, data, dictionaryPage != null ? start : NONE, statistics));
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

    /**
     * Writes the last row group and the footer, with {@code keyValues} as its key/value metadata, and closes
     * the stream.
     */
    void finish(SequencedMap<String, String> keyValues) throws IOException {
        flushGroup();
        try {
            writer.submit(() -> {}).get();   // every page of this file is written once the writer reaches this
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while writing the Parquet file");
        } catch (ExecutionException e) {
            throw new IOException(e.getCause());
        }
        if (failure != null) throw failure;
        Bytes footer = new Bytes(1 << 12);
        footer.structValue().i32(1, 1);
        footer.list(2, Bytes.LIST_STRUCT, NamedRows.PARQUET_COLUMNS.size() + 1);
        footer.structValue().binary(4, bytes("schema")).i32(5, NamedRows.PARQUET_COLUMNS.size()).end();
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
        schema(footer, "source", BYTE_ARRAY, OPTIONAL, UTF8);
        schema(footer, "allocation_stack", BYTE_ARRAY, OPTIONAL, UTF8);
        schema(footer, "free_stack", BYTE_ARRAY, OPTIONAL, UTF8);
        footer.i64(3, total);
        footer.list(4, Bytes.LIST_STRUCT, groups.size());
        for (int g = 0; g < groups.size(); g++) rowGroup(footer, groups.get(g), groupRows.get(g));
        footer.list(5, Bytes.LIST_STRUCT, keyValues.size());
        for (Map.Entry<String, String> kv : keyValues.entrySet())
            footer.structValue().binary(1, bytes(kv.getKey())).binary(2, bytes(kv.getValue())).end();
        footer.binary(6, bytes("memtrace"));
        // every column is ordered by its type (unsigned for UINT_64): the statistics' min and max follow it
        footer.list(7, Bytes.LIST_STRUCT, NamedRows.PARQUET_COLUMNS.size());
        for (int i = 0; i < NamedRows.PARQUET_COLUMNS.size(); i++) footer.structValue().struct(1).end().end();
        footer.end();
        footer.writeTo(out);
        int length = footer.size();
        out.write(new byte[] {(byte) length, (byte) (length >>> 8), (byte) (length >>> 16), (byte) (length >>> 24)});
        out.write(MAGIC);
        out.close();
    }

    private void rowGroup(Bytes footer, List<Chunk> chunks, long rows) {
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
            c.statistics().write(footer, 12);
            footer.end().end();
        }
        footer.i64(2, bytes).i64(3, rows).end();
    }

    private static void schema(Bytes footer, String name, int type, int repetition, int converted) {
        footer.structValue().i32(1, type).i32(3, repetition).binary(4, bytes(name));
        if (converted != NONE) footer.i32(6, converted);
        footer.end();
    }

    private static byte[] bytes(String s) { return s.getBytes(StandardCharsets.UTF_8); }
}
