package org.memtrace.select;

import org.memtrace.x86.Instruction;

/** A memory-referencing instruction of a basic block with the BID expression of the location it accesses. */
public record MemoryReference(Instruction instruction, BidExpression expression) {
    public long address() {
        return instruction.address();
    }
}
