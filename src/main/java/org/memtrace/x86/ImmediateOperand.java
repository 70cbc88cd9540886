package org.memtrace.x86;

/** An immediate; when {@code relative} it is an offset from the next instruction (direct branches). */
public record ImmediateOperand(long value, boolean relative, Visibility visibility) implements Operand {
}
