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

    public List<MemoryOperand> memoryOperands() {
        var result = new ArrayList<MemoryOperand>(2);
        for (Operand o : operands) {
            if (o instanceof MemoryOperand m) {
                result.add(m);
            }
        }
        return result;
    }

    /** The memory accesses this instruction performs, in operand order; lea, prefetch and NOPs have none. */
    public List<MemoryAccess> accesses() {
        var result = new ArrayList<MemoryAccess>(2);
        for (Operand o : operands) {
            if (o instanceof MemoryOperand m && m.accessesMemory()) {
                result.add(new MemoryAccess(m.sizeBytes(), m.read(), m.write(), m.isImplicitStack(), rep, m));
            }
        }
        return List.copyOf(result);
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
