package org.memtrace.select;

import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.Operand;
import org.memtrace.x86.Register;
import org.memtrace.x86.RegisterOperand;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Walks one basic block and gives each memory-referencing instruction its BID expression, with registers
 * numbered by incarnation (§III-B). An instruction's address is formed before its own register writes take
 * effect ({@code push} addresses with the old rsp), so expressions are built first and incarnations bumped
 * after.
 *
 * <p>What counts as memory-referencing: an operand that really accesses memory (not lea, not a prefetch or
 * multi-byte NOP). Stack accesses, through rsp or rbp or the implicit slot of push/pop/call/ret, count only
 * when {@code includeStack} is set: the paper's target is data. Nor does a load of a GOT slot (the linker's
 * indirection, which it may relax away). An instruction with two memory operands
 * (movs, cmps, push [mem]) is represented by its first data operand; instrumenting it records both.
 */
final class StabilityAnalysis {
    private final ExpressionBuilder builder;
    private final boolean includeStack;

    StabilityAnalysis(ExpressionBuilder builder, boolean includeStack) {
        this.builder = builder;
        this.includeStack = includeStack;
    }

    List<MemoryReference> references(BasicBlock block) {
        var incarnations = new Incarnations();
        var result = new ArrayList<MemoryReference>();
        for (Instruction insn : block.instructions()) {
            referenced(insn).ifPresent(m -> result.add(new MemoryReference(insn, builder.build(insn, m, incarnations))));
            for (Register written : insn.registersWritten()) {
                incarnations.overwritten(written);
            }
            staticAddressLoad(insn).ifPresent(reg -> incarnations.holdsStaticAddress(reg,
                    builder.staticAddress(insn, insn.memoryOperands().getFirst())));
        }
        return result;
    }

    private Optional<MemoryOperand> referenced(Instruction insn) {
        MemoryOperand fallback = null;
        for (Operand o : insn.operands()) {
            if (o instanceof MemoryOperand m && m.accessesMemory() && (includeStack || !isStack(m))
                    && !builder.readsGot(insn, m)) {
                if (o.visibility() == Operand.Visibility.EXPLICIT && !isStack(m)) {
                    return Optional.of(m);
                }
                if (fallback == null) {
                    fallback = m;
                }
            }
        }
        return Optional.ofNullable(fallback);
    }

    /** The register a 64-bit {@code lea reg, [rip+x]} fills with the static address x. */
    private static Optional<Register> staticAddressLoad(Instruction insn) {
        if (!insn.mnemonic().equals("lea") || insn.operands().size() < 2
                || !(insn.operands().get(0) instanceof RegisterOperand(Register dest, _, _, _))
                || !(insn.operands().get(1) instanceof MemoryOperand m)
                || !m.isRipRelative() || !m.index().isNone() || dest.widthBits() != 64) {
            return Optional.empty();
        }
        return Optional.of(dest);
    }

    static boolean isStack(MemoryOperand m) {
        return m.isStack();
    }
}
