package org.memtrace.x86;

import java.util.OptionalLong;

/**
 * A memory operand {@code segment:[base + index*scale + displacement]}, with register values as they are
 * before the instruction executes: push and call write {@code [rsp-8]}, pop and ret read {@code [rsp]}.
 *
 * @param sizeBytes     bytes touched by one access (one element for rep string instructions); 0 when the
 *                      operand does not access memory
 * @param read          the instruction may read the location (READ or CONDREAD)
 * @param write         the instruction may write the location (WRITE or CONDWRITE)
 * @param use           whether memory is really accessed: {@code lea} only computes the address, and
 *                      prefetches and multi-byte NOPs carry a memory operand that the CPU never accesses
 *                      in the program's order
 * @param staticAddress the address when it is known without running the program: RIP-relative operands
 *                      resolved against the instruction's address, and absolute ones outside fs/gs
 */
public record MemoryOperand(Register segment, Register base, Register index, int scale, long displacement,
                            int sizeBytes, boolean read, boolean write, Use use, Visibility visibility,
                            OptionalLong staticAddress) implements Operand {

    public enum Use {
        /** The CPU reads and/or writes the location. */
        ACCESS,
        /** Only the address is computed: {@code lea}, MPX's mib operands. */
        ADDRESS,
        /** A prefetch or multi-byte NOP: an address without an architectural access. */
        HINT
    }

    public boolean accessesMemory() {
        return use == Use.ACCESS;
    }

    public boolean isRipRelative() {
        return base.isInstructionPointer();
    }

    /** The operand push/pop/call/ret/enter/leave use behind the scenes: not written, addressed via rsp. */
    public boolean isImplicitStack() {
        return visibility != Visibility.EXPLICIT && base.isStackPointer();
    }

    /** A stack access: an implicit stack slot, or an operand based on rsp or rbp (the frame). */
    public boolean isStack() {
        return isImplicitStack() || base.isStackPointer() || base.isFramePointer();
    }
}
