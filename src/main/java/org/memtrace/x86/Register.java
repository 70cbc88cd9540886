package org.memtrace.x86;

/**
 * An x86-64 register as Zydis numbers it. {@link #enclosing()} is the widest register that contains it
 * ({@code eax → rax}, {@code xmm3 → zmm3}): writing a part of a register changes the value an address
 * expression built on the whole register would compute, so stability analysis tracks enclosing registers.
 */
public record Register(int id, String name, int widthBits, int enclosingId) {
    public static final Register NONE = new Register(0, "none", 0, 0);

    public boolean isNone() {
        return id == 0;
    }

    public Register enclosing() {
        return enclosingId == id ? this : Zydis.get().register(enclosingId);
    }

    public boolean isInstructionPointer() {
        return enclosingId == ZydisLayout.REGISTER_RIP;
    }

    public boolean isStackPointer() {
        return enclosingId == ZydisLayout.REGISTER_RSP;
    }

    public boolean isFramePointer() {
        return enclosingId == ZydisLayout.REGISTER_RBP;
    }

    /** fs and gs carry a base of their own (thread-local storage), unlike the flat ds/es/ss/cs. */
    public boolean isSegmentWithBase() {
        return id == ZydisLayout.REGISTER_FS || id == ZydisLayout.REGISTER_GS;
    }

    /** The register called {@code name} in Zydis's spelling (lower case, e.g. "rax", "xmm0"). */
    public static Register named(String name) {
        return Zydis.get().registerNamed(name);
    }

    @Override
    public String toString() {
        return name;
    }
}
