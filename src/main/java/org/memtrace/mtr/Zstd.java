package org.memtrace.mtr;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

/**
 * zstd frame decompression through Debian's libzstd.so.1 (Foreign Function & Memory API). The library is on
 * every Debian system (dpkg itself needs it) and is the one the runtime compresses with, so memtrace ships
 * no JNI library of its own and reads exactly what the runtime wrote.
 */
final class Zstd {
    private static final String LIBRARY = "libzstd.so.1";
    private static volatile Zstd instance;

    private final MethodHandle decompress;
    private final MethodHandle contentSize;
    private final MethodHandle isError;
    private final MethodHandle errorName;

    private Zstd(SymbolLookup lib) {
        Linker linker = Linker.nativeLinker();
        decompress = linker.downcallHandle(find(lib, "ZSTD_decompress"),
                FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG));
        contentSize = linker.downcallHandle(find(lib, "ZSTD_getFrameContentSize"), FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_LONG));
        isError = linker.downcallHandle(find(lib, "ZSTD_isError"), FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
        errorName = linker.downcallHandle(find(lib, "ZSTD_getErrorName"), FunctionDescriptor.of(ADDRESS, JAVA_LONG));
    }

    /** The library, loaded once; a missing library is reported as a chunk that cannot be read. */
    static Zstd get() throws MtrFormatException {
        Zstd z = instance;
        if (z != null) return z;
        synchronized (Zstd.class) {
            if (instance == null) {
                try {
                    instance = new Zstd(SymbolLookup.libraryLookup(LIBRARY, Arena.global()));
                } catch (IllegalArgumentException e) {
                    throw new MtrFormatException("cannot decompress: " + LIBRARY + " is missing (apt-get install libzstd1)");
                }
            }
            return instance;
        }
    }

    private static MemorySegment find(SymbolLookup lib, String name) {
        return lib.find(name).orElseThrow(() -> new IllegalArgumentException(LIBRARY + " lacks " + name));
    }

    /** Decompresses one frame whose header states its content size (the runtime's always do) into a new array. */
    byte[] decompress(MemorySegment src) throws MtrFormatException {
        long n;
        try {
            n = (long) contentSize.invokeExact(src, src.byteSize());
        } catch (Throwable t) {
            throw new MtrFormatException("zstd: " + t);
        }
        if (n < 0 || n > Integer.MAX_VALUE - 8) throw new MtrFormatException("zstd: the frame does not state a usable content size");
        try (Arena arena = Arena.ofConfined()) { // a downcall takes native memory only
            MemorySegment out = arena.allocate(Math.max(n, 1)).asSlice(0, n);
            decompress(src, out);
            return out.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        }
    }

    /** Decompresses one frame into {@code dst}; the frame must fill it exactly. */
    void decompress(MemorySegment src, MemorySegment dst) throws MtrFormatException {
        long n;
        try {
            n = (long) decompress.invokeExact(dst, dst.byteSize(), src, src.byteSize());
            if ((int) isError.invokeExact(n) != 0) {
                MemorySegment name = (MemorySegment) errorName.invokeExact(n);
                throw new MtrFormatException("zstd: " + name.reinterpret(256).getString(0));
            }
        } catch (MtrFormatException e) {
            throw e;
        } catch (Throwable t) {
            throw new MtrFormatException("zstd: " + t);
        }
        if (n != dst.byteSize())
            throw new MtrFormatException("the frame holds " + n + " bytes, the chunk header says " + dst.byteSize());
    }
}
