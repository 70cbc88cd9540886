package org.memtrace.testutil;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes {@code .mtr} files byte for byte as docs/compiled-in.md lays them out (what the runtime writes),
 * for tests of the reader: the test decides every chunk's thread, contents and codec, so it can interleave
 * threads, split an event across chunks, cut the file short or damage it.
 */
public final class MtrWriter {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private long order;
    private long chunks;
    private long records;

    /** Slots of one chunk, in the thread's program order. */
    public static final class Slots {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private long records;

        /** An access record: the effective address (the count for a rep-count site) and the site's run-time address. */
        public Slots access(long address, long site) {
            slot(address, site);
            records++;
            return this;
        }

        /** An event tag with its global sequence number, then the record in whole slots, zero-padded. */
        public Slots event(long sequence, byte[] record) {
            slot(sequence, 1L << 63 | (long) record.length << 8 | 1);
            byte[] padded = new byte[(record.length + 15) & ~15];
            System.arraycopy(record, 0, padded, 0, record.length);
            bytes.writeBytes(padded);
            records++;
            return this;
        }

        /** A raw slot, for tags the format does not define. */
        public Slots slot(long w0, long w1) {
            bytes.writeBytes(le(16).putLong(w0).putLong(w1).array());
            return this;
        }

        /** The slots as bytes, for a test that splits them across chunks by hand. */
        public byte[] bytes() { return bytes.toByteArray(); }
    }

    public MtrWriter(long pid) {
        out.writeBytes(le(64).put("MTRFILE1".getBytes()).putInt(1).putInt(64).putLong(pid).putLong(4096).array());
    }

    /** A chunk holding {@code raw} (whole slots), zstd-compressed or stored. */
    public MtrWriter chunk(int tid, byte[] raw, boolean zstd) {
        return chunk(tid, zstd ? compress(raw) : raw, raw.length, zstd ? 1 : 0);
    }

    /** A chunk whose payload is {@code stored} as it is, said to hold {@code rawLength} bytes by {@code codec}: a damaged one. */
    public MtrWriter chunk(int tid, byte[] stored, int rawLength, int codec) {
        out.writeBytes(le(32).putInt(0x4b4e4843).putInt(tid).putLong(order++).putInt(stored.length).putInt(rawLength)
                .putInt(codec).putInt(0).array());
        out.writeBytes(stored);
        out.writeBytes(new byte[(8 - stored.length % 8) % 8]);
        chunks++;
        return this;
    }

    public MtrWriter chunk(int tid, Slots slots, boolean zstd) {
        records += slots.records;
        return chunk(tid, slots.bytes(), zstd);
    }

    /** The end record a clean exit writes. */
    public MtrWriter end(long dropped) {
        out.writeBytes(le(32).putInt(0x444e4545).putInt(0).putLong(chunks).putLong(records).putLong(dropped).array());
        return this;
    }

    public byte[] bytes() { return out.toByteArray(); }

    public Path write(Path file) throws IOException {
        return Files.write(file, bytes());
    }

    private static ByteBuffer le(int size) {
        return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** One zstd frame from Debian's libzstd, as the runtime makes them (level 1). */
    static byte[] compress(byte[] raw) {
        try (Arena arena = Arena.ofConfined()) {
            SymbolLookup lib = SymbolLookup.libraryLookup("libzstd.so.1", arena);
            Linker linker = Linker.nativeLinker();
            MethodHandle bound = linker.downcallHandle(lib.find("ZSTD_compressBound").orElseThrow(),
                    FunctionDescriptor.of(JAVA_LONG, JAVA_LONG));
            MethodHandle compress = linker.downcallHandle(lib.find("ZSTD_compress").orElseThrow(),
                    FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_INT));
            MemorySegment src = arena.allocate(Math.max(1, raw.length));
            MemorySegment.copy(raw, 0, src, ValueLayout.JAVA_BYTE, 0, raw.length);
            long cap = (long) bound.invokeExact((long) raw.length);
            MemorySegment dst = arena.allocate(cap);
            long n = (long) compress.invokeExact(dst, cap, src, (long) raw.length, 1);
            if (n < 0 || n > cap) throw new IllegalStateException("ZSTD_compress failed: " + n);
            return dst.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
