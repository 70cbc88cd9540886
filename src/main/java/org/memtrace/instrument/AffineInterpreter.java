package org.memtrace.instrument;

import static org.memtrace.instrument.AsmFacts.spelled;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.memtrace.instrument.Induction.Update;
import org.memtrace.instrument.LoopSkeleton.Affine;
import org.memtrace.x86.Flow;
import org.memtrace.x86.ImmediateOperand;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.Operand;
import org.memtrace.x86.Register;
import org.memtrace.x86.RegisterOperand;

/**
 * The registers of one outer iteration as affine values of the registers at its start, instruction by
 * instruction through its straight code: moves, {@code lea}, additions of constants and of registers, shifts
 * and zeroing; any other write leaves its register unknown. At the start a register is known when the body
 * never writes it (invariant) or only steps it once (induction: its value then is the entry value plus the
 * iterations times the step, which the replay counts).
 */
final class AffineInterpreter {
    private final Map<Register, List<Integer>> writers;
    private final Map<Register, Update> induction;
    private final Map<Register, Affine> state = new HashMap<>();

    AffineInterpreter(Map<Register, List<Integer>> writers, Map<Register, Update> induction) {
        this.writers = writers;
        this.induction = induction;
    }

    Affine value(Register r) {
        if (state.containsKey(r)) return state.get(r);
        return !writers.containsKey(r) || induction.containsKey(r) ? Affine.register(r) : null;
    }

    void set(Register r, Affine v) { state.put(r, v); }

    void kill(Instruction i) {
        for (Register w : i.registersWritten()) state.put(w.enclosing(), null);
    }

    void run(FunctionPlanner.Decoded d) {
        Instruction i = d.instruction();
        List<Operand> ops = i.operands();
        Affine result = null;
        Register target = null;
        if (i.flow() == Flow.SEQUENTIAL && i.accesses().isEmpty() && spelled(d) && !ops.isEmpty()
                && ops.getFirst() instanceof RegisterOperand ro && !ro.register().isNone()) {
            Register dst = ro.register();
            target = dst.enclosing();
            int w = dst.widthBits();
            Operand src = ops.size() > 1 ? ops.get(1) : null;
            result = switch (i.mnemonic()) {
                case "mov", "movabs" -> w == 64 && src instanceof RegisterOperand s && s.register().widthBits() == 64
                        ? value(s.register())
                        : src instanceof ImmediateOperand imm && (w == 64 || w == 32 && imm.value() >= 0)
                        ? Affine.of(w == 32 ? imm.value() & 0xffffffffL : imm.value()) : null;
                case "xor" -> src instanceof RegisterOperand s && s.register().equals(dst) && w >= 32 ? Affine.of(0) : null;
                case "lea" -> w == 64 && src instanceof MemoryOperand m ? address(m) : null;
                case "add", "sub" -> {
                    Affine a = w == 64 ? value(target) : null;
                    Affine b = src instanceof ImmediateOperand imm ? Affine.of(imm.value())
                            : src instanceof RegisterOperand s && s.register().widthBits() == 64 ? value(s.register()) : null;
                    yield a == null || b == null ? null : a.plus(i.mnemonic().equals("add") ? b : b.times(-1));
                }
                case "inc", "dec" -> {
                    Affine a = w == 64 ? value(target) : null;
                    yield a == null ? null : a.plus(Affine.of(i.mnemonic().equals("inc") ? 1 : -1));
                }
                case "shl", "sal" -> {
                    Affine a = w == 64 && src instanceof ImmediateOperand imm && imm.value() >= 0 && imm.value() < 63 ? value(target) : null;
                    yield a == null ? null : a.times(1L << ((ImmediateOperand) src).value());
                }
                default -> null;
            };
        }
        kill(i);
        if (result != null) state.put(target, result);
    }

    private Affine address(MemoryOperand m) {
        if (m.segment().isSegmentWithBase()) return null;
        Affine a = Affine.of(m.displacement());
        if (!m.base().isNone()) {
            if (m.base().isInstructionPointer() || m.base().widthBits() != 64) return null;
            Affine b = value(m.base());
            if (b == null) return null;
            a = a.plus(b);
        }
        if (!m.index().isNone()) {
            if (m.index().widthBits() != 64) return null;
            Affine x = value(m.index());
            if (x == null) return null;
            a = a.plus(x.times(Math.max(1, m.scale())));
        }
        return a;
    }
}
