package org.memtrace.rewrite;

import java.util.List;
import java.util.Optional;
import java.util.function.LongPredicate;
import org.memtrace.x86.Decoder;
import org.memtrace.x86.Flow;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryAccess;
import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.Operand;
import org.memtrace.x86.RegisterOperand;

/**
 * {@link PatchPlanner}'s rules for one instruction: whether a probe can record it, which of its accesses it
 * records, and how its bytes run in a trampoline ({@link Decision.Move}), alone, in a run or in a tail.
 */
final class PartRules {
    private final Decoder decoder;
    /** The memory instructions to trace, by link-time address (a selection, {@code --omega}); the others only move. */
    private final LongPredicate traced;
    /** Whether stack accesses (through %rsp or %rbp, and implicit slots) of a traced instruction are recorded. */
    private final boolean stack;

    PartRules(Decoder decoder, LongPredicate traced, boolean stack) {
        this.decoder = decoder;
        this.traced = traced;
        this.stack = stack;
    }

    /** Whether a probe records {@code insn}'s accesses. */
    boolean traces(Instruction insn) { return !insn.accesses().isEmpty() && traced.test(insn.address()); }

    /** The accesses a probe records for {@code insn}: none when it is not traced, else its own (stack ones only with {@link #stack}). */
    List<MemoryAccess> recorded(Instruction insn) {
        if (!traces(insn)) return List.of();
        return stack ? insn.accesses() : insn.accesses().stream().filter(a -> !a.operand().isStack()).toList();
    }

    /**
     * An instruction as a part of a run, or null when a probe could not record it or its bytes could not
     * move: sequential ones, a plain {@code ret}, direct jumps and conditional jumps without prefixes (the
     * assembler writes them anew) and calls (emulated; a call ends the run, so its return lands past it);
     * never an indirect jump, a loop or jrcxz.
     */
    Decision.Part part(Instruction insn, byte[] bytes) {
        if (refusal(insn, bytes) != null) return null;
        Decision.Move move = Decision.Move.COPY;
        switch (insn.flow()) {
            case SEQUENTIAL -> { }
            case RETURN -> {
                if ((bytes[0] & 0xff) != 0xc3 && (bytes[0] & 0xff) != 0xc2) return null;
            }
            case JUMP, CONDITIONAL_JUMP -> {
                int op = bytes[0] & 0xff;
                boolean plain = op == 0xeb || op == 0xe9 || (op >= 0x70 && op <= 0x7f)
                        || op == 0x0f && bytes.length == 6 && (bytes[1] & 0xf0) == 0x80;
                if (!plain || insn.branchTarget().isEmpty()) return null;
                move = Decision.Move.BRANCH;
            }
            case CALL -> move = callMove(insn, bytes);
            default -> { return null; }
        }
        return new Decision.Part(insn, bytes, recorded(insn), ripDisplacement(insn, bytes), move);
    }

    /**
     * A short instruction as the one part of a trampoline the int3 fallback enters (the instruction keeps its
     * place, so nothing about its neighbours matters), or null when a probe cannot record it: sequential
     * ones, any return, an indirect jump (its bytes, RIP-relative re-aimed; nothing falls through) and the
     * calls a trampoline emulates.
     */
    Decision.Part trapPart(Instruction insn, byte[] bytes) {
        if (refusal(insn, bytes) != null) return null;
        Decision.Move move = switch (insn.flow()) {
            case SEQUENTIAL, RETURN -> Decision.Move.COPY;
            case JUMP -> insn.branchTarget().isEmpty() ? Decision.Move.COPY : null;
            case CALL -> callMove(insn, bytes);
            default -> null;
        };
        return move == null ? null : new Decision.Part(insn, bytes, insn.accesses(), ripDisplacement(insn, bytes), move);
    }

    /**
     * An instruction as a copy in a trampoline's tail (docs/rewriting.md, "Trampoline tails"): as the int3
     * fallback's part (sequential ones, any return, an indirect jump, the calls a trampoline emulates), its
     * accesses the ones this planner records; a plain conditional jump as a run's last part is (written anew
     * to its target; the tail goes on where it falls through); null for any other (a direct jump, a system
     * call, a trap, an instruction no probe can record), which ends the tail before it.
     */
    Decision.Part tailPart(Instruction insn, byte[] bytes) {
        if (insn.flow() == Flow.CONDITIONAL_JUMP) return part(insn, bytes);
        Decision.Part p = trapPart(insn, bytes);
        return p == null ? null : new Decision.Part(insn, bytes, recorded(insn), p.ripDisplacement(), p.move());
    }

    /** The decision for one instruction that accesses memory, {@code bytes} its encoding, on its own. */
    Decision decide(Instruction insn, byte[] bytes) {
        Decision.Reason no = refusal(insn, bytes);
        if (no != null) return new Decision.Left(insn, no);
        if (insn.length() < PatchPlanner.JUMP_LENGTH) return new Decision.Left(insn, Decision.Reason.SHORT);
        Decision.Move move = insn.flow() == Flow.CALL ? callMove(insn, bytes) : Decision.Move.COPY;
        return new Decision.Patch(List.of(new Decision.Part(insn, bytes, recorded(insn), ripDisplacement(insn, bytes), move)));
    }

    /**
     * Why a probe could not record {@code insn}, or its bytes could not run in a trampoline; null when they
     * can. A probe computes 64-bit addresses of general registers, adds the thread pointer to an {@code %fs}
     * operand when it is the instruction's last access (computed before the cursor is loaded), records a rep
     * string instruction's pointers and count, and re-aims a RIP-relative displacement it can find.
     */
    private Decision.Reason refusal(Instruction insn, byte[] bytes) {
        if (insn.rep() && !Decision.Part.repString(insn) && !insn.accesses().isEmpty()) return Decision.Reason.REP;
        if (insn.flow() == Flow.CALL && callMove(insn, bytes) == null) return Decision.Reason.CALL;
        List<MemoryAccess> accesses = insn.accesses();
        for (int k = 0; k < accesses.size(); k++) {
            MemoryOperand m = accesses.get(k).operand();
            boolean fsLast = m.segment().name().equals("fs") && k == accesses.size() - 1;
            if (m.segment().isSegmentWithBase() && !fsLast) return Decision.Reason.SEGMENT;
            if (!addressable(m) || accesses.get(k).sizeBytes() > 255) return Decision.Reason.ADDRESSING;
        }
        for (MemoryOperand m : insn.memoryOperands())
            if (m.isRipRelative() && ripDisplacement(insn, bytes, m) < 0) return Decision.Reason.ADDRESSING;
        return null;
    }

    /**
     * How a call runs in a trampoline: {@code e8 rel32} pushes its return address and jumps; {@code ff /2}
     * through a 64-bit register other than %rsp or a memory operand without segment pushes it and jumps
     * through the same operand. Null for others (far calls, a 32-bit address).
     */
    private static Decision.Move callMove(Instruction insn, byte[] bytes) {
        if (insn.branchTarget().isPresent())
            return bytes.length == PatchPlanner.JUMP_LENGTH && (bytes[0] & 0xff) == 0xe8 ? Decision.Move.CALL : null;
        var explicit = insn.operands().stream().filter(o -> switch (o) {
            case RegisterOperand r -> r.visibility() == Operand.Visibility.EXPLICIT;
            case MemoryOperand m -> m.visibility() == Operand.Visibility.EXPLICIT;
            default -> false;
        }).toList();
        if (explicit.size() != 1) return null;
        return switch (explicit.getFirst()) {
            case RegisterOperand r -> r.register().widthBits() == 64 && !r.register().isStackPointer() ? Decision.Move.INDIRECT_CALL : null;
            case MemoryOperand m -> m.sizeBytes() == 8 && !m.segment().isSegmentWithBase() && addressable(m) ? Decision.Move.INDIRECT_CALL : null;
            default -> null;
        };
    }

    /** Where the instruction's RIP-relative displacement sits in {@code bytes}; -1 when it has none. */
    private int ripDisplacement(Instruction insn, byte[] bytes) {
        for (MemoryOperand m : insn.memoryOperands()) if (m.isRipRelative()) return ripDisplacement(insn, bytes, m);
        return -1;
    }

    /** Whether a probe's {@code lea} can compute the operand: 64-bit general registers only (no VSIB, no addr32). */
    private static boolean addressable(MemoryOperand m) {
        boolean base = m.base().isNone() || m.isRipRelative() || m.base().widthBits() == 64;
        boolean index = m.index().isNone() || m.index().widthBits() == 64;
        return base && index;
    }

    /**
     * Where the RIP-relative displacement sits in {@code bytes}: the 4-byte field holding it that, changed,
     * changes the decoded displacement by as much (so an immediate that happens to hold the same bytes is
     * not taken for it); -1 when none does.
     */
    private int ripDisplacement(Instruction insn, byte[] bytes, MemoryOperand m) {
        for (int p = bytes.length - 4; p >= 1; p--) {
            if (PatchPlanner.readInt(bytes, p) != (int) m.displacement()) continue;
            byte[] moved = bytes.clone();
            PatchPlanner.writeInt(moved, p, (int) m.displacement() + 0x1000);
            Optional<Instruction> again = decoder.decode(moved, 0, insn.address());
            if (again.isEmpty() || again.get().length() != bytes.length) continue;
            for (MemoryOperand o : again.get().memoryOperands())
                if (o.isRipRelative() && o.displacement() == m.displacement() + 0x1000) return p;
        }
        return -1;
    }
}
