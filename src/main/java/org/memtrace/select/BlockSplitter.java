package org.memtrace.select;

import org.memtrace.x86.Flow;
import org.memtrace.x86.Instruction;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Splits a function's instructions into basic blocks. A block starts at the function entry, at the target
 * of a direct jump inside the function, and after every instruction that does not simply continue: jumps,
 * returns, traps, and also calls and system calls. A call may never come back (exit, longjmp, a throwing
 * callee), and the accuracy argument of §III-C needs every instruction of a block to run once the block is
 * entered, so a call ends its block like a branch.
 */
final class BlockSplitter {
    private BlockSplitter() {
    }

    static List<BasicBlock> split(List<Instruction> instructions, long start, long end) {
        Set<Long> leaders = new HashSet<>();
        if (!instructions.isEmpty()) {
            leaders.add(instructions.getFirst().address());
        }
        for (Instruction insn : instructions) {
            if (insn.flow() != Flow.SEQUENTIAL) {
                leaders.add(insn.nextAddress());
            }
            insn.branchTarget().ifPresent(t -> {
                if (t >= start && t < end && insn.flow() != Flow.CALL) {
                    leaders.add(t);
                }
            });
        }
        var blocks = new ArrayList<BasicBlock>();
        var current = new ArrayList<Instruction>();
        for (Instruction insn : instructions) {
            if (leaders.contains(insn.address()) && !current.isEmpty()) {
                blocks.add(new BasicBlock(current.getFirst().address(), current));
                current.clear();
            }
            current.add(insn);
        }
        if (!current.isEmpty()) {
            blocks.add(new BasicBlock(current.getFirst().address(), current));
        }
        return blocks;
    }
}
