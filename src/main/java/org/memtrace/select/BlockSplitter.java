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
        for (int k = 0; k < instructions.size(); k++) {
            Instruction insn = instructions.get(k);
            // the next instruction of the list, not the next address: the rewriter's list has no alignment
            // padding, so after a jump or return the next instruction may start a few bytes further on
            if (insn.flow() != Flow.SEQUENTIAL && k + 1 < instructions.size()) {
                leaders.add(instructions.get(k + 1).address());
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
