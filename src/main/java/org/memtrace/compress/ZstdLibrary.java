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

/**
 * Debian's libzstd.so.1 through the Foreign Function & Memory API: the library the compiled-in runtime
 * compresses its traces with (so the reader reads exactly what it wrote), and on every Debian system since
 * dpkg needs it; memtrace ships no compression code of its own. Loaded once; the compressor (this package)
 * and the .mtr reader's decompressor bind their functions through it.
 */
public final class ZstdLibrary {
    public static final String NAME = "libzstd.so.1";
    private static volatile ZstdLibrary instance;

    private final SymbolLookup lookup;
    /** Bound at the first call that may have failed: a downcall handle costs milliseconds to make in a fresh JVM. */
    private volatile MethodHandle isError, errorName;

    private ZstdLibrary(SymbolLookup lookup) {
        this.lookup = lookup;
    }

    /** The library; IllegalArgumentException when it is missing or lacks a function memtrace uses. */
    public static ZstdLibrary get() {
        ZstdLibrary z = instance;
        if (z != null) return z;
        synchronized (ZstdLibrary.class) {
            if (instance == null) instance = new ZstdLibrary(SymbolLookup.libraryLookup(NAME, Arena.global()));
            return instance;
        }
    }

    /** A downcall to the library's function {@code name}. */
    public MethodHandle function(String name, FunctionDescriptor descriptor, Linker.Option... options) {
        MemorySegment address = lookup.find(name).orElseThrow(() -> new IllegalArgumentException(NAME + " lacks " + name));
        return Linker.nativeLinker().downcallHandle(address, descriptor, options);
    }

    /** zstd's name for the error a call returned as {@code code}, or null when the call succeeded. */
    public String error(long code) throws Throwable {
        if (isError == null) {
            errorName = function("ZSTD_getErrorName", FunctionDescriptor.of(ADDRESS, JAVA_LONG));
            isError = function("ZSTD_isError", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
        }
        if ((int) isError.invokeExact(code) == 0) return null;
        MemorySegment name = (MemorySegment) errorName.invokeExact(code);
        return name.reinterpret(256).getString(0);
    }
}
