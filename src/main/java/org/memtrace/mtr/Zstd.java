package org.memtrace.mtr;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.atomic.AtomicInteger;
import org.memtrace.compress.ZstdLibrary;

/**
 * zstd frame decompression of the runtime's chunks, through {@link ZstdLibrary}. Binds as few functions as
 * a trace needs, each when first needed: each downcall handle costs 6-15 ms to make in a fresh JVM, and its
 * first call 2 ms more, which is most of what a small trace's first read costs beyond the JVM's own start
 * (docs/compiled-in.md, "Replay speed"). The frame's content size is read from its header here; a reader
 * decompresses its first frames with ZSTD_decompress alone and binds a reusable context (two more
 * functions) only for a trace long enough to repay them.
 */
final class Zstd {
    private static volatile Zstd instance;
    private static final int FRAME_MAGIC = 0xFD2FB528;

    /**
     * Frames the JVM decompresses before it binds the context functions: binding them costs a fresh JVM about
     * 15 ms, a frame without a context (zstd allocating and freeing one for the call, about a hundred KB)
     * tens of µs. Counted per JVM, not per reading buffer: once bound, a buffer's first frame has a context
     * too (with a count per buffer, a trace of a few dozen chunks read its every frame without one).
     */
    static final int FRAMES_WITHOUT_CONTEXT = 16;
    private final AtomicInteger framesWithout = new AtomicInteger();
    private final ZstdLibrary lib;
    // critical with heap access: a frame goes straight into the reader's byte[], no native buffer and copy
    // between; a chunk is at most a few MB, so a call holds off the GC for a millisecond or so at most
    private final MethodHandle decompress;
    /** The context functions, bound by the first {@link #context}. */
    private volatile MethodHandle decompressWith, createContext, freeContext;

    private Zstd(ZstdLibrary lib) {
        this.lib = lib;
        decompress = lib.function("ZSTD_decompress", FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG),
                Linker.Option.critical(true));
    }

    /** The library, loaded once; a missing library is reported as a chunk that cannot be read. */
    static Zstd get() throws MtrFormatException {
        Zstd z = instance;
        if (z != null) return z;
        synchronized (Zstd.class) {
            if (instance == null) {
                try {
                    instance = new Zstd(ZstdLibrary.get());
                } catch (IllegalArgumentException e) {
                    throw new MtrFormatException("cannot decompress: " + ZstdLibrary.NAME + " is missing (apt-get install libzstd1)");
                }
            }
            return instance;
        }
    }

    /**
     * The content size the frame's header states (the runtime's always do), read as RFC 8878 section 3.1.1.1
     * lays the header out: magic, descriptor, window descriptor unless single-segment, dictionary id, size.
     */
    static int contentSize(MemorySegment src) throws MtrFormatException {
        long length = src.byteSize();
        if (length < 5 || src.get(ValueLayout.JAVA_INT_UNALIGNED, 0) != FRAME_MAGIC) throw new MtrFormatException("zstd: not a zstd frame");
        int descriptor = Byte.toUnsignedInt(src.get(ValueLayout.JAVA_BYTE, 4));
        boolean singleSegment = (descriptor & 0x20) != 0;
        int sizeBytes = switch (descriptor >>> 6) {
            case 0 -> singleSegment ? 1 : 0;
            case 1 -> 2;
            case 2 -> 4;
            default -> 8;
        };
        int at = 5 + (singleSegment ? 0 : 1) + new int[] {0, 1, 2, 4}[descriptor & 3];
        if (sizeBytes == 0 || at + sizeBytes > length) throw new MtrFormatException("zstd: the frame does not state a usable content size");
        long n = 0;
        for (int i = sizeBytes - 1; i >= 0; i--) n = n << 8 | Byte.toUnsignedLong(src.get(ValueLayout.JAVA_BYTE, at + i));
        if (sizeBytes == 2) n += 256;
        if (n < 0 || n > Integer.MAX_VALUE - 8) throw new MtrFormatException("zstd: the frame does not state a usable content size");
        return (int) n;
    }

    /** Whether a reading buffer should make its context now: the functions are bound, or enough frames went without. */
    boolean contextsPay() {
        return decompressWith != null || framesWithout.incrementAndGet() > FRAMES_WITHOUT_CONTEXT;
    }

    /**
     * A decompression context that lives as long as {@code arena}: made once per reading buffer, since
     * ZSTD_decompress makes and frees one per frame (about a hundred KB each time).
     */
    MemorySegment context(Arena arena) throws MtrFormatException {
        synchronized (this) {
            if (decompressWith == null) {
                createContext = lib.function("ZSTD_createDCtx", FunctionDescriptor.of(ADDRESS));
                freeContext = lib.function("ZSTD_freeDCtx", FunctionDescriptor.of(JAVA_LONG, ADDRESS));
                decompressWith = lib.function("ZSTD_decompressDCtx",
                        FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG), Linker.Option.critical(true));
            }
        }
        MemorySegment ctx;
        try {
            ctx = (MemorySegment) createContext.invokeExact();
        } catch (Throwable t) {
            throw new MtrFormatException("zstd: " + t);
        }
        if (ctx.equals(MemorySegment.NULL)) throw new MtrFormatException("zstd: no memory for a decompression context");
        return ctx.reinterpret(arena, c -> {
            try {
                long ignored = (long) freeContext.invokeExact(c);
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        });
    }

    /** Decompresses one frame with {@code context} into {@code dst[0, length)}, which the frame must fill exactly. */
    void decompress(MemorySegment context, MemorySegment src, byte[] dst, int length) throws MtrFormatException {
        check(() -> (long) decompressWith.invokeExact(context, MemorySegment.ofArray(dst), (long) length, src, src.byteSize()), length);
    }

    /**
     * Decompresses one frame into {@code dst} (native or heap memory), which it must fill exactly: zstd makes
     * and frees a context of its own for the call (about a hundred KB).
     */
    void decompress(MemorySegment src, MemorySegment dst) throws MtrFormatException {
        check(() -> (long) decompress.invokeExact(dst, dst.byteSize(), src, src.byteSize()), dst.byteSize());
    }

    private interface Call {
        long run() throws Throwable;
    }

    /** Runs a decompression and turns zstd's error codes and a short frame into one sentence. */
    private void check(Call call, long expected) throws MtrFormatException {
        long n;
        try {
            n = call.run();
            if (n == expected) return; // zstd's error codes are near 2^64, never a length that was expected
            String error = lib.error(n);
            if (error != null) throw new MtrFormatException("zstd: " + error);
        } catch (MtrFormatException e) {
            throw e;
        } catch (Throwable t) {
            throw new MtrFormatException("zstd: " + t);
        }
        if (n != expected) throw new MtrFormatException("the frame holds " + n + " bytes, " + expected + " were expected");
    }
}
