package org.memtrace.x86;

/** A far pointer {@code segment:offset}; invalid in 64-bit code but decodable, so it is represented. */
public record PointerOperand(int segment, long offset, Visibility visibility) implements Operand {
}
