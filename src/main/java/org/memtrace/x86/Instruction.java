package org.memtrace.x86;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * A decoded x86-64 instruction at its runtime (or link-time) address.
 *
 * @param operands     every operand Zydis reports, explicit ones first, then implicit and hidden ones
 * @param branchTarget the destination of a direct jump or call; empty for indirect ones and non-branches
 * @param rep          a rep/repe/repne prefix is in effect
 */
public record Instruction(long address, int length, String mnemonic, List<Operand> operands, Flow flow,
                          OptionalLong branchTarget, boolean rep, boolean lock) {

    public Instruction {
        operands = List.copyOf(operands);
    }

    public long nextAddress() {
        return address + length;
    }

    /**
     * The memory operands, in operand order. Unmodifiable; most instructions have none, and then nothing is
     * allocated (a planner asks every instruction of a module, several times).
     */
    public List<MemoryOperand> memoryOperands() {
        MemoryOperand first = null;
        List<MemoryOperand> more = null;
        for (Operand o : operands) {
            if (o instanceof MemoryOperand m) {
                if (first == null) {
                    first = m;
                } else {
                    if (more == null) {
                        more = new ArrayList<>(3);
                        more.add(first);
                    }
                    more.add(m);
                }
            }
        }
        return more != null ? List.copyOf(more) : first != null ? List.of(first) : List.of();
    }

    /** The memory accesses this instruction performs, in operand order; lea, prefetch and NOPs have none. */
    public List<MemoryAccess> accesses() {
        MemoryAccess first = null;
        List<MemoryAccess> more = null;
        for (Operand o : operands) {
            if (o instanceof MemoryOperand m && m.accessesMemory()) {
                var a = new MemoryAccess(m.sizeBytes(), m.read(), m.write(), m.isImplicitStack(), rep, m);
                if (first == null) {
                    first = a;
                } else {
                    if (more == null) {
                        more = new ArrayList<>(3);
                        more.add(first);
                    }
                    more.add(a);
                }
            }
        }
        return more != null ? List.copyOf(more) : first != null ? List.of(first) : List.of();
    }

    /** Registers whose value this instruction may change, as their enclosing 64-bit (or vector) register. */
    public List<Register> registersWritten() {
        var result = new ArrayList<Register>(2);
        for (Operand o : operands) {
            if (o instanceof RegisterOperand r && r.write() && !r.register().isNone()) {
                Register whole = r.register().enclosing();
                if (!result.contains(whole)) {
                    result.add(whole);
                }
            }
        }
        return result;
    }

    @Override
    public String toString() {
        return "%x: %s (%d bytes)".formatted(address, mnemonic, length);
    }
}
