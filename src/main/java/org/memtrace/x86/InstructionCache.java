package org.memtrace.x86;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Decoded instructions by address, for the dynamic tracer that asks about the same few thousand
 * instruction pointers millions of times. A hit costs one probe of an open-addressing table keyed by the
 * raw address: no boxing, no decoding, no allocation.
 *
 * <p>Not thread-safe, like the {@link Decoder} it uses.
 */
public final class InstructionCache {

    /** Where the cache reads code from: the traced process's memory, or a file. */
    @FunctionalInterface
    public interface CodeSource {
        /** Copies up to {@code into.length} bytes of code at {@code address} into {@code into}; returns the count (0 if none). */
        int read(long address, byte[] into);
    }

    /** An instruction with its accesses computed once. */
    private record Entry(Instruction instruction, List<MemoryAccess> accesses) {
    }

    private static final Entry UNDECODABLE = new Entry(null, List.of());

    private final Decoder decoder;
    private final CodeSource source;
    private final byte[] window = new byte[ZydisLayout.MAX_INSTRUCTION_LENGTH];
    private long[] keys = new long[1024];
    private Entry[] values = new Entry[1024];
    private int size;

    public InstructionCache(Decoder decoder, CodeSource source) {
        this.decoder = decoder;
        this.source = source;
    }

    /** The instruction at {@code ip}; empty when the code there cannot be read or decoded. */
    public Optional<Instruction> instructionAt(long ip) {
        return Optional.ofNullable(entry(ip).instruction());
    }

    /** The memory accesses of the instruction at {@code ip}; empty for non-memory or undecodable code. */
    public List<MemoryAccess> accessesAt(long ip) {
        return entry(ip).accesses();
    }

    public int size() {
        return size;
    }

    private Entry entry(long ip) {
        int mask = keys.length - 1;
        for (int slot = hash(ip) & mask; ; slot = (slot + 1) & mask) {
            Entry e = values[slot];
            if (e == null) {
                Entry fresh = load(ip);
                insert(ip, fresh);
                return fresh;
            }
            if (keys[slot] == ip) {
                return e;
            }
        }
    }

    private Entry load(long ip) {
        int n = source.read(ip, window);
        if (n <= 0) {
            return UNDECODABLE;
        }
        byte[] code = n == window.length ? window : Arrays.copyOf(window, n);
        return decoder.decode(code, 0, ip).map(i -> new Entry(i, i.accesses())).orElse(UNDECODABLE);
    }

    private void insert(long ip, Entry e) {
        if ((size + 1) * 2 > keys.length) {
            grow();
        }
        int mask = keys.length - 1;
        int slot = hash(ip) & mask;
        while (values[slot] != null) {
            slot = (slot + 1) & mask;
        }
        keys[slot] = ip;
        values[slot] = e;
        size++;
    }

    private void grow() {
        long[] oldKeys = keys;
        Entry[] oldValues = values;
        keys = new long[oldKeys.length * 2];
        values = new Entry[oldValues.length * 2];
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldValues[i] != null) {
                insert(oldKeys[i], oldValues[i]);
            }
        }
    }

    private static int hash(long ip) {
        long h = ip * 0x9E37_79B9_7F4A_7C15L;
        return (int) (h ^ (h >>> 32));
    }
}
