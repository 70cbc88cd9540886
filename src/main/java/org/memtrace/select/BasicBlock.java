package org.memtrace.select;

import org.memtrace.x86.Instruction;

import java.util.List;

/** A maximal straight-line run of instructions: entered only at the first, left only after the last. */
public record BasicBlock(long start, List<Instruction> instructions) {
    public BasicBlock {
        instructions = List.copyOf(instructions);
    }

    public long end() {
        return instructions.isEmpty() ? start : instructions.getLast().nextAddress();
    }
}
