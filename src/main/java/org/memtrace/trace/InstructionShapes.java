package org.memtrace.trace;

/**
 * What the trace needs to know about the instruction at a code address: how many bytes its memory operand
 * spans and whether it reads and writes it (add [m],r; inc [m]; xchg). Implemented by the x86 layer; the
 * default knows nothing, and the trace then reports accesses exactly as the CPU did.
 * <p>
 * An implementation that needs the stream (modules and mappings, to find the code bytes) also implements
 * {@link EventConsumer} and is put before the writers in the consumer list.
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
