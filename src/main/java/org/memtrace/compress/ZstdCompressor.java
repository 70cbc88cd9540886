package org.memtrace.compress;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

/**
 * zstd compression of heap byte arrays through Debian's libzstd.so.1 (Foreign Function & Memory API), the
 * library the .mtr reader decompresses with, so memtrace ships no compression code of its own. One
 * compression context, reused for every call: a context per call would allocate its tables each time.
 * The calls pass the arrays themselves (a critical downcall: no copy to native memory), so they are meant
 * for buffers of a few MiB; garbage collection waits for a call to end. Not thread-safe.
 */
public final class ZstdCompressor {
    private static final String LIBRARY = "libzstd.so.1";

    private final MethodHandle compress, bound, isError, errorName;
    private final MemorySegment context;
    private final int level;

    private ZstdCompressor(SymbolLookup lib, int level) throws Throwable {
        Linker linker = Linker.nativeLinker();
        var heap = Linker.Option.critical(true);
        compress = linker.downcallHandle(find(lib, "ZSTD_compressCCtx"),
                FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_INT), heap);
        bound = linker.downcallHandle(find(lib, "ZSTD_compressBound"), FunctionDescriptor.of(JAVA_LONG, JAVA_LONG));
        isError = linker.downcallHandle(find(lib, "ZSTD_isError"), FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
        errorName = linker.downcallHandle(find(lib, "ZSTD_getErrorName"), FunctionDescriptor.of(ADDRESS, JAVA_LONG));
        MethodHandle create = linker.downcallHandle(find(lib, "ZSTD_createCCtx"), FunctionDescriptor.of(ADDRESS));
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
            return Optional.of(new ZstdCompressor(SymbolLookup.libraryLookup(LIBRARY, Arena.global()), level));
        } catch (Throwable t) {
            return Optional.empty();
        }
    }

    private static MemorySegment find(SymbolLookup lib, String name) {
        return lib.find(name).orElseThrow(() -> new IllegalArgumentException(LIBRARY + " lacks " + name));
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
            if ((int) isError.invokeExact(r) != 0) {
                MemorySegment name = (MemorySegment) errorName.invokeExact(r);
                throw new IllegalStateException("zstd: " + name.reinterpret(256).getString(0));
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("zstd: " + t, t);
        }
        return (int) r;
    }
}
