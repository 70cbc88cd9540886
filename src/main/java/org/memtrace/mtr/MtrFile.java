package org.memtrace.mtr;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * The framing of a {@code .mtr} file (docs/compiled-in.md, "The .mtr file"): the header, the index of its
 * chunks by thread and the end record. Opening reads only chunk headers; payloads are read later, one chunk
 * at a time, by {@link MtrReader}. A damaged chunk or a file cut short ends the index there: what comes
 * before is still read, and {@link #problem} says why the rest is not.
 *
 * <p>Version 2 ({@link #VERSION_CHECKED}, what the runtime writes; agent/include/mt_file.h is the C side of
 * this layout) checks a CRC32C of the header, of every chunk header (here, while indexing: a damaged one ends
 * the index, as its thread and length cannot be trusted), of every payload (in {@link #words}, before it is
 * decoded: the damage ends that thread's trace) and of the end record. Version 1 files are read unchecked.
 */
public final class MtrFile implements AutoCloseable {
    /** The bytes "MTRFILE1" read as a little-endian u64. */
    public static final long MAGIC = 0x31454c494652544dL;
    /** Files before checksums: 32-byte chunk headers, read without checks. */
    public static final int VERSION_UNCHECKED = 1;
    /** CRC32C of the header, each chunk header, each payload and the end record (docs/compiled-in.md, "Checksums"). */
    public static final int VERSION_CHECKED = 2;
    public static final int VERSION = VERSION_CHECKED;
    public static final int HEADER_SIZE = 64;
    /** Where the header's checksum (of the bytes before it) lies, in version 2. */
    public static final int HEADER_CRC_OFFSET = 60;
    public static final int CHUNK_MAGIC = 0x4b4e4843;
    public static final int CHUNK_HEADER_SIZE_UNCHECKED = 32;
    public static final int CHUNK_HEADER_SIZE = 40;
    /** In a version 2 chunk header: the payload's checksum, then the header's (of the 32 bytes before it). */
    public static final int CHUNK_PAYLOAD_CRC_OFFSET = 28;
    public static final int CHUNK_HEADER_CRC_OFFSET = 32;
    public static final int END_MAGIC = 0x444e4545;
    public static final int END_SIZE = 32;
    /** In a version 2 end record: the checksum of its three counts (bytes 8 to 31). */
    public static final int END_CRC_OFFSET = 4;
    public static final int SLOT = 16;
    public static final int CODEC_STORED = 0;
    public static final int CODEC_ZSTD = 1;
    /** zstd of the slots after the site-delta transform (docs/compiled-in.md, "Codecs"). */
    public static final int CODEC_ZSTD_DELTA = 2;
    /** zstd of the slots packed into varints (docs/compiled-in.md, "Codecs"); the runtime's default before codec 4. */
    public static final int CODEC_ZSTD_PACKED = 3;
    /** Codec 3 with each record's site predicted from the one before (docs/compiled-in.md, "Codecs"): the runtime's default. */
    public static final int CODEC_ZSTD_PREDICTED = 4;
    /** Codec 4 with tables of 65,536 entries (docs/compiled-in.md, "Codecs"); the runtime's default before codec 6. */
    public static final int CODEC_ZSTD_PREDICTED_WIDE = 5;
    /** Codec 5 with each site's granule (its differences' common trailing zero bits) taken out. */
    public static final int CODEC_ZSTD_SCALED = 6;
    /** Codec 6's tokens for the records a site's stride does not predict, runs for those it does, in three streams (docs/trace-format.md, "Codec 7"). */
    public static final int CODEC_ZSTD_FUSED = 7;
    /** Records predicted from the slot a period back, tokens naming a recent slot of their site (docs/trace-format.md, "Codec 8"). */
    public static final int CODEC_ZSTD_PERIOD = 8;
    /** Codec 7 with a short token, a fixed two-byte difference, for a predicted site's miss (docs/trace-format.md, "Codec 9"): the runtime's default. */
    public static final int CODEC_ZSTD_FUSED_SHORT = 9;
    /** Codec 9 whose entries keep a second follower, a hit of its own in the run stream (docs/trace-format.md, "Codec 10"). */
    public static final int CODEC_ZSTD_FUSED_OTHER = 10;
    /** Codec 10 with index edges, a random index's record two bytes in a run of hits (docs/trace-format.md, "Codec 11"). */
    public static final int CODEC_ZSTD_FUSED_INDEX = 11;

    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED;

    /**
     * One chunk: where its payload lies in the file, how to turn it into {@code rawLength} bytes of slots,
     * and the payload's checksum ({@code checked} false for a version 1 file, which has none).
     */
    public record Chunk(int tid, long order, long offset, int storedLength, int rawLength, int codec, boolean checked, int crc) {
        public Chunk(int tid, long order, long offset, int storedLength, int rawLength, int codec) {
            this(tid, order, offset, storedLength, rawLength, codec, false, 0);
        }
    }

    /** The end record a clean exit writes. */
    public record End(long chunks, long records, long dropped) {}

    private final Arena arena;
    private final MemorySegment file;
    private final long pid;
    private final long pageSize;
    private final Map<Integer, List<Chunk>> threads = new LinkedHashMap<>();
    private final long chunkCount;
    private final boolean checked;
    private End end;
    private String problem;

    private MtrFile(Arena arena, MemorySegment file) throws MtrFormatException {
        this.arena = arena;
        this.file = file;
        if (file.byteSize() < HEADER_SIZE) throw new MtrFormatException("not a .mtr file: shorter than its 64-byte header");
        if (file.get(U64, 0) != MAGIC) throw new MtrFormatException("not a .mtr file (no MTRFILE1 magic)");
        int version = file.get(U32, 8);
        if (version != VERSION_CHECKED && version != VERSION_UNCHECKED)
            throw new MtrFormatException(".mtr version " + Integer.toUnsignedString(version) + " is not supported (this memtrace reads versions "
                    + VERSION_UNCHECKED + " and " + VERSION_CHECKED + ")");
        checked = version == VERSION_CHECKED;
        if (checked && crc(0, HEADER_CRC_OFFSET) != file.get(U32, HEADER_CRC_OFFSET))
            throw new MtrFormatException("the .mtr header is damaged (its checksum does not match): nothing in the file can be trusted");
        int headerSize = file.get(U32, 12);
        if (headerSize < HEADER_SIZE || headerSize > file.byteSize())
            throw new MtrFormatException("header size " + Integer.toUnsignedString(headerSize) + " is impossible");
        pid = file.get(U64, 16);
        pageSize = file.get(U64, 24);
        chunkCount = index(headerSize);
        for (List<Chunk> chunks : threads.values()) chunks.sort(Comparator.comparingLong(Chunk::order));
        if (end == null && problem == null)
            problem = "the trace has no end record: the program was killed or memtrace's runtime could not finish; it holds what was written before";
        else if (end != null && end.chunks() != chunkCount)
            problem = "the end record counts " + end.chunks() + " chunks, the file holds " + chunkCount;
    }

    public static MtrFile open(Path path) throws IOException, MtrFormatException {
        Arena arena = Arena.ofShared(); // MtrReader's decoder threads read chunks too
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            return new MtrFile(arena, ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena));
        } catch (IOException | MtrFormatException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /** Whether a file starts like a .mtr file (for commands that read several kinds of traces). */
    public static boolean hasMagic(byte[] first8) {
        if (first8.length < 8) return false;
        long v = 0;
        for (int i = 7; i >= 0; i--) v = v << 8 | (first8[i] & 0xff);
        return v == MAGIC;
    }

    /** Reads every chunk header up to the end record, the end of the file or the first damage; returns the chunks indexed. */
    private long index(long at) {
        long size = file.byteSize();
        long n = 0;
        while (at < size) {
            if (size - at < 4) return truncated(at, n);
            int magic = file.get(U32, at);
            if (magic == END_MAGIC) {
                if (size - at < END_SIZE) return truncated(at, n);
                if (checked && crc(at + 8, END_SIZE - 8) != file.get(U32, at + END_CRC_OFFSET)) {
                    problem = "the end record at offset " + at + " is damaged (its checksum does not match); the " + n + " chunks before it are read";
                    return n;
                }
                end = new End(file.get(U64, at + 8), file.get(U64, at + 16), file.get(U64, at + 24));
                if (at + END_SIZE != size) problem = (size - at - END_SIZE) + " bytes follow the end record; they are ignored";
                return n;
            }
            if (magic != CHUNK_MAGIC) {
                problem = "corrupt chunk at offset " + at + " (bad magic 0x" + Integer.toHexString(magic) + "); the rest of the file is ignored";
                return n;
            }
            int headerSize = checked ? CHUNK_HEADER_SIZE : CHUNK_HEADER_SIZE_UNCHECKED;
            if (size - at < headerSize) return truncated(at, n);
            if (checked && crc(at, CHUNK_HEADER_CRC_OFFSET) != file.get(U32, at + CHUNK_HEADER_CRC_OFFSET)) {
                // its thread and its length are unknown: no later chunk can be told to follow on from it
                problem = "chunk " + n + " at offset " + at + " has a damaged header (its checksum does not match); the rest of the file is ignored";
                return n;
            }
            int tid = file.get(U32, at + 4);
            long order = file.get(U64, at + 8);
            long stored = Integer.toUnsignedLong(file.get(U32, at + 16));
            long raw = Integer.toUnsignedLong(file.get(U32, at + 20));
            int codec = file.get(U32, at + 24);
            String bad = raw % SLOT != 0 ? "its " + raw + " raw bytes are not whole 16-byte slots"
                    : codec == CODEC_STORED && stored != raw ? "stored chunk of " + stored + " bytes for " + raw + " raw bytes"
                    : (codec < CODEC_STORED || codec > CODEC_ZSTD_FUSED_INDEX) ? "unknown codec " + Integer.toUnsignedString(codec)
                    : raw > Integer.MAX_VALUE - SLOT ? "raw length " + raw + " is too large" : null;
            if (bad != null) {
                problem = "corrupt chunk at offset " + at + " (" + bad + "); the rest of the file is ignored";
                return n;
            }
            long payload = at + headerSize;
            if (size - payload < stored) return truncated(at, n);
            if (checked && (file.get(U32, at + CHUNK_HEADER_CRC_OFFSET + 4) != 0 || !zeros(payload + stored, Math.min(size, payload + ((stored + 7) & -8L))))) {
                // the bytes no checksum covers must be zero: so that no damaged byte goes unnoticed
                problem = "chunk " + n + " at offset " + at + " is damaged (bytes that must be zero are not); the rest of the file is ignored";
                return n;
            }
            threads.computeIfAbsent(tid, t -> new ArrayList<>()).add(new Chunk(tid, order, payload, (int) stored, (int) raw, codec,
                    checked, checked ? file.get(U32, at + CHUNK_PAYLOAD_CRC_OFFSET) : 0));
            n++;
            at = payload + ((stored + 7) & -8L);
        }
        return n;
    }

    private boolean zeros(long from, long to) {
        for (long i = from; i < to; i++) if (file.get(ValueLayout.JAVA_BYTE, i) != 0) return false;
        return true;
    }

    /** CRC32C of {@code length} bytes of the file from {@code offset}. */
    private int crc(long offset, long length) {
        CRC32C c = new CRC32C();
        c.update(file.asSlice(offset, length).asByteBuffer());
        return (int) c.getValue();
    }

    private long truncated(long at, long chunks) {
        problem = "the trace is truncated at offset " + at + " (after " + chunks + " whole chunks)";
        return chunks;
    }

    public long pid() { return pid; }

    public long pageSize() { return pageSize; }

    /** Each thread's chunks in the order they were written; threads in the order their first chunk appears. */
    public Map<Integer, List<Chunk>> threads() { return threads; }

    public long chunks() { return chunkCount; }

    /** The stored (compressed) bytes of all chunks' payloads: what a reader's progress counts against. */
    public long storedBytes() {
        long n = 0;
        for (List<Chunk> chunks : threads.values()) for (Chunk c : chunks) n += c.storedLength();
        return n;
    }

    public Optional<End> end() { return Optional.ofNullable(end); }

    /**
     * The first chunk whose payload does not match its checksum, as a sentence, or empty: what a reader would
     * find while decoding, found without decoding (run --record-only; CRC32C runs at memory speed).
     */
    public Optional<String> damaged() {
        for (List<Chunk> chunks : threads.values())
            for (Chunk c : chunks)
                if (c.checked() && crc(c.offset(), c.storedLength()) != c.crc())
                    return Optional.of("the chunk at offset " + (c.offset() - CHUNK_HEADER_SIZE) + " is damaged (its checksum does not match)");
        return Optional.empty();
    }

    /** Why the file is incomplete or damaged, when it is: one sentence for a {@code memtrace:} line. */
    public Optional<String> problem() { return Optional.ofNullable(problem); }

    /**
     * Decodes the chunk's slots into {@code scratch.words} (grown as needed) as little-endian words, two per
     * slot; returns how many words they fill. On the heap because the reader reads every word of a slot
     * twice or more, and reads of native memory check the arena each time.
     */
    int words(Chunk c, Scratch scratch) throws MtrFormatException {
        MemorySegment stored = file.asSlice(c.offset(), c.storedLength());
        // checked before decoding: a damaged payload may still decompress, into records that never were
        if (c.checked() && crc(c.offset(), c.storedLength()) != c.crc())
            throw new MtrFormatException("the chunk at offset " + (c.offset() - CHUNK_HEADER_SIZE) + " is damaged (its checksum does not match)");
        int count = c.rawLength() / 8;
        long[] words = scratch.words(count);
        switch (c.codec()) {
            case CODEC_STORED -> MemorySegment.copy(stored, U64, 0, words, 0, count);
            case CODEC_ZSTD_PACKED, CODEC_ZSTD_PREDICTED, CODEC_ZSTD_PREDICTED_WIDE, CODEC_ZSTD_SCALED, CODEC_ZSTD_FUSED,
                    CODEC_ZSTD_PERIOD, CODEC_ZSTD_FUSED_SHORT, CODEC_ZSTD_FUSED_OTHER, CODEC_ZSTD_FUSED_INDEX -> {
                Zstd zstd = Zstd.get();
                int length = Zstd.contentSize(stored);
                byte[] packed = scratch.packed(length);
                MemorySegment context = scratch.context(zstd);
                if (context == null) zstd.decompress(stored, MemorySegment.ofArray(packed).asSlice(0, length));
                else zstd.decompress(context, stored, packed, length);
                if (c.codec() == CODEC_ZSTD_PACKED) PackedSlots.unpack(packed, length, words, count);
                else if (c.codec() == CODEC_ZSTD_SCALED) ScaledSlots.unpack(packed, length, words, count, scratch.table);
                else if (c.codec() == CODEC_ZSTD_FUSED || c.codec() == CODEC_ZSTD_FUSED_SHORT || c.codec() == CODEC_ZSTD_FUSED_OTHER
                        || c.codec() == CODEC_ZSTD_FUSED_INDEX)
                    FusedSlots.unpack(packed, length, words, count, scratch.table, FusedSlots.shift(c.codec()),
                            c.codec() == CODEC_ZSTD_FUSED_INDEX);
                else if (c.codec() == CODEC_ZSTD_PERIOD) PeriodSlots.unpack(packed, length, words, count, scratch.table);
                else PackedSlots.unpackPredicted(packed, length, words, count,
                        c.codec() == CODEC_ZSTD_PREDICTED ? PackedSlots.TABLE_BITS : PackedSlots.WIDE_TABLE_BITS, scratch.table);
            }
            default -> { // codecs 1 and 2, kept to measure the transforms: the slots themselves, through native memory
                MemorySegment into = scratch.slots(c.rawLength());
                Zstd.get().decompress(stored, into);
                if (c.codec() == CODEC_ZSTD_DELTA) SiteDelta.undo(into);
                MemorySegment.copy(into, U64, 0, words, 0, count);
            }
        }
        return count;
    }

    /** One chunk's buffers, reused from chunk to chunk by one thread at a time: its decoded words, the zstd output, a zstd context. */
    static final class Scratch {
        private final Arena arena;
        private long[] words = new long[0];
        private byte[] packed = new byte[0];
        private MemorySegment slots = MemorySegment.NULL;
        private MemorySegment context;
        private final PackedSlots.Table table = new PackedSlots.Table();

        Scratch(Arena arena) { this.arena = arena; }

        long[] words(int count) {
            if (words.length < count) words = new long[Math.max(count, 2 * words.length)];
            return words;
        }

        byte[] packed(int length) {
            if (packed.length < length) packed = new byte[Math.max(length, 2 * packed.length)];
            return packed;
        }

        MemorySegment slots(int size) {
            if (slots.byteSize() < size) slots = arena.allocate(Math.max(size, 2 * slots.byteSize()), 16);
            return slots.asSlice(0, size);
        }

        /** The context for the next frame: null while the JVM has not decompressed enough frames to bind one ({@link Zstd#contextsPay}). */
        MemorySegment context(Zstd zstd) throws MtrFormatException {
            if (context == null && zstd.contextsPay()) context = zstd.context(arena);
            return context;
        }
    }

    @Override
    public void close() { arena.close(); }
}
