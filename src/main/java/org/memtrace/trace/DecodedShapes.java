package org.memtrace.trace;

import java.nio.ByteBuffer;
import org.memtrace.symbols.AddressSpace;
import org.memtrace.x86.Decoder;
import org.memtrace.x86.Flow;
import org.memtrace.x86.InstructionCache;
import org.memtrace.x86.MemoryAccess;

/**
 * Instruction shapes from the x86 decoder. Code bytes come from the ELF files of the address space the
 * naming keeps up to date, so the stream is read once; each instruction is decoded once and cached, and
 * its shape kept in a direct-mapped table in front of the decoder's cache: asked for every fault, a shape
 * is one array probe and no allocation.
 */
public final class DecodedShapes implements InstructionShapes {
    private static final int SLOTS = 1 << 12;
    private final InstructionCache cache;
    private final long[] ips = new long[SLOTS];
    private final Shape[] shapes = new Shape[SLOTS];

    public DecodedShapes(AddressSpace space) {
        this.cache = new InstructionCache(new Decoder(), (address, into) -> {
            ByteBuffer code = space.bytesAt(address, into.length);
            int n = code.remaining();
            code.get(into, 0, n);
            return n;
        });
    }

    /** The first explicit access of the instruction: the data operand the fault was about, not a stack slot. */
    @Override
    public Shape shapeOf(long ip) {
        int slot = (int) ((ip * 0x9E3779B97F4A7C15L) >>> 52);
        Shape s = shapes[slot];
        if (s != null && ips[slot] == ip) return s;
        s = decode(ip);
        ips[slot] = ip;
        shapes[slot] = s;
        return s;
    }

    /** The instruction's length in bytes, 0 when the code there cannot be read or decoded. */
    public int lengthOf(long ip) {
        return cache.instructionAt(ip).map(i -> i.length()).orElse(0);
    }

    /** How the instruction passes control on; {@link Flow#SEQUENTIAL} when it cannot be decoded. */
    public Flow flowOf(long ip) {
        return cache.instructionAt(ip).map(i -> i.flow()).orElse(Flow.SEQUENTIAL);
    }

    /** Whether the instruction is a jump or call whose destination is in the instruction (rel8/rel32). */
    public boolean direct(long ip) {
        return cache.instructionAt(ip).map(i -> i.branchTarget().isPresent()).orElse(false);
    }

    private Shape decode(long ip) {
        for (MemoryAccess a : cache.accessesAt(ip))
            if (!a.implicitStack()) return new Shape(a.sizeBytes(), a.isReadModifyWrite());
        return Shape.UNKNOWN;
    }
}
