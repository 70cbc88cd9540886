package org.memtrace.x86;

/** A register the instruction reads and/or writes; conditional actions (cmov) count as read or write. */
public record RegisterOperand(Register register, boolean read, boolean write, Visibility visibility)
        implements Operand {
}
