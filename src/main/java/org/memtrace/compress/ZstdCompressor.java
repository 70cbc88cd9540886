package org.memtrace.compress;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

/**
 * zstd compression of heap byte arrays through {@link ZstdLibrary}. One compression context, reused for
 * every call: a context per call would allocate its tables each time. The calls pass the arrays themselves
 * (a critical downcall: no copy to native memory), so they are meant for buffers of a few MiB; garbage
 * collection waits for a call to end. Not thread-safe.
 */
public final class ZstdCompressor {
    private final ZstdLibrary lib;
    private final MethodHandle compress, bound;
    private final MemorySegment context;
    private final int level;

    private ZstdCompressor(ZstdLibrary lib, int level) throws Throwable {
        this.lib = lib;
        compress = lib.function("ZSTD_compressCCtx",
                FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_INT),
                Linker.Option.critical(true));
        bound = lib.function("ZSTD_compressBound", FunctionDescriptor.of(JAVA_LONG, JAVA_LONG));
        MethodHandle create = lib.function("ZSTD_createCCtx", FunctionDescriptor.of(ADDRESS));
        context = (MemorySegment) create.invokeExact();
        if (context.equals(MemorySegment.NULL)) throw new IllegalStateException("ZSTD_createCCtx failed");
        this.level = level;
    }

    /**
     * A compressor at {@code level} (1 is zstd's fastest regular level, negative ones faster still), or empty when the library is missing
     * or unusable: the caller then writes its data uncompressed.
     */
    public static Optional<ZstdCompressor> load(int level) {
        try {
            return Optional.of(new ZstdCompressor(ZstdLibrary.get(), level));
        } catch (Throwable t) {
            return Optional.empty();
        }
    }

    /** The most bytes {@link #compress} can produce from {@code n}. */
    public int bound(int n) {
        try {
            return Math.toIntExact((long) bound.invokeExact((long) n));
        } catch (Throwable t) {
            throw new IllegalStateException("zstd: " + t, t);
        }
    }

    /**
     * Compresses {@code src[0, n)} into one zstd frame at the start of {@code dst}, which must hold
     * {@link #bound}(n) bytes; returns the frame's size.
     */
    public int compress(byte[] src, int n, byte[] dst) {
        long r;
        try {
            r = (long) compress.invokeExact(context, MemorySegment.ofArray(dst), (long) dst.length,
                    MemorySegment.ofArray(src), (long) n, level);
            String error = lib.error(r);
            if (error != null) throw new IllegalStateException("zstd: " + error);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("zstd: " + t, t);
        }
        return (int) r;
    }
}
