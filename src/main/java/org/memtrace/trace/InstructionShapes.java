package org.memtrace.trace;

/**
 * What the trace needs to know about the instruction at a code address: how many bytes its memory operand
 * spans and whether it reads and writes it (add [m],r; inc [m]; xchg). Implemented by the x86 layer; the
 * default knows nothing, and the trace then reports accesses exactly as the CPU did. An implementation
 * finds the code bytes through the naming's address space ({@link DecodedShapes}), so it needs no events of
 * its own.
 */
@FunctionalInterface
public interface InstructionShapes {

    /** Size of the memory operand in bytes (0 when unknown) and whether it is a read-modify-write. */
    record Shape(int size, boolean readModifyWrite) {
        public static final Shape UNKNOWN = new Shape(0, false);

        public boolean known() { return size > 0; }
    }

    Shape shapeOf(long ip);

    InstructionShapes UNKNOWN = ip -> Shape.UNKNOWN;
}
