package org.memtrace.instrument;

import static org.memtrace.instrument.AsmFacts.FLAGS;
import static org.memtrace.instrument.AsmFacts.number;
import static org.memtrace.instrument.LoopSkeleton.NONE;

import java.util.List;
import java.util.Map;
import org.memtrace.format.SiteFormat;
import org.memtrace.instrument.Induction.Update;
import org.memtrace.x86.ImmediateOperand;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryAccess;
import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.Operand;
import org.memtrace.x86.Register;
import org.memtrace.x86.RegisterOperand;

/**
 * The registers of a loop body (issue 10): which ones it steps once per iteration by a constant or an invariant
 * register (induction), which accesses have an address affine in those and the invariant ones, which depend on
 * a load, and whether the loop's exit depends on loaded data (a search).
 */
final class Induction {
    private Induction() {
    }

    /** An induction register's update: at body position {@code at}, by {@code step} plus an invariant register's value. */
    record Update(int at, long step, Register register) {
    }

    /**
     * The update of the 64-bit register {@code r} by {@code d}: a constant added (add, sub, inc, dec, lea) or
     * a register the body never writes ({@code add %reg, %r}); null when it is no such update.
     */
    static Update update(FunctionPlanner.Decoded d, Register r, int at, Map<Register, List<Integer>> writers) {
        List<Operand> ops = d.instruction().operands();
        if (d.instruction().mnemonic().equals("add") && ops.size() >= 2 && ops.get(0) instanceof RegisterOperand dst
                && ops.get(1) instanceof RegisterOperand src && dst.register().equals(r)
                && dst.register().widthBits() == 64 && src.register().widthBits() == 64
                && src.visibility() == Operand.Visibility.EXPLICIT && !src.register().equals(r)
                && !writers.containsKey(src.register())) {
            return new Update(at, 0, src.register());
        }
        Long step = step(d, r);
        return step == null ? null : new Update(at, step, null);
    }

    /** The constant {@code insn} adds to the 64-bit register {@code r}; null when it is no such update. */
    static Long step(FunctionPlanner.Decoded d, Register r) {
        Instruction insn = d.instruction();
        // a relocated immediate or displacement decodes as 0 in the object: only what the text spells is a constant
        for (String o : d.text().operands()) {
            String t = o.strip();
            if (t.startsWith("$") ? number(t.substring(1)) == null
                    : !t.startsWith("%") && (t.indexOf('(') < 0 ? number(t) == null
                    : t.indexOf('(') > 0 && number(t.substring(0, t.indexOf('(')).strip()) == null)) return null;
        }
        List<Operand> ops = insn.operands();
        if (ops.isEmpty() || !(ops.getFirst() instanceof RegisterOperand dst)) return null;
        if (!dst.register().equals(r) || dst.register().widthBits() != 64) return null;
        String mn = insn.mnemonic();
        switch (mn) {
            case "add", "sub" -> {
                if (ops.size() < 2 || !(ops.get(1) instanceof ImmediateOperand imm)
                        || imm.visibility() != Operand.Visibility.EXPLICIT) return null;
                return mn.equals("add") ? imm.value() : -imm.value();
            }
            case "inc" -> {
                return 1L;
            }
            case "dec" -> {
                return -1L;
            }
            case "lea" -> {
                if (ops.size() < 2 || !(ops.get(1) instanceof MemoryOperand m)) return null;
                if (!m.base().equals(r) || !m.index().isNone() || m.segment().isSegmentWithBase()) return null;
                return m.displacement();
            }
            default -> {
                return null;
            }
        }
    }

    /**
     * The instruction's one explicit access when the replay can compute it: one site, a plain load, store or
     * modify, no segment base, no RIP, a numeric displacement as the text wrote it, and 64-bit registers
     * that the body leaves alone or steps.
     */
    static MemoryOperand affine(FunctionPlanner.Decoded d, List<Site> sites, Map<Register, List<Integer>> writers,
                                        Map<Register, Update> induction) {
        List<MemoryAccess> accesses = d.instruction().accesses();
        if (sites.size() != 1 || accesses.size() != 1) return null;
        Site site = sites.getFirst();
        if (site.kind() < SiteFormat.LOAD || site.kind() > SiteFormat.MODIFY || site.fs()) return null;
        MemoryOperand m = accesses.getFirst().operand();
        if (m.visibility() != Operand.Visibility.EXPLICIT || m.segment().isSegmentWithBase()) return null;
        for (Register r : List.of(m.base(), m.index())) {
            if (r.isNone()) continue;
            if (r.isInstructionPointer() || r.widthBits() != 64) return null;
            if (writers.containsKey(r) && !induction.containsKey(r)) return null;
        }
        List<String> texts = d.text().memoryOperands();
        if (texts.size() != 1) return null;
        String text = texts.getFirst();
        int colon = text.indexOf(':');
        if (colon >= 0 && (text.indexOf('(') < 0 || colon < text.indexOf('('))) return null;
        int open = text.indexOf('(');
        String disp = (open < 0 ? text : text.substring(0, open)).strip();
        if (open < 0) return null;
        if (!disp.isEmpty()) {
            Long v = number(disp);
            if (v == null || v != m.displacement()) return null;
        } else if (m.displacement() != 0) {
            return null;
        }
        return m;
    }

    /** Whether a register the access's address uses is written in the body by an instruction that reads memory. */
    static boolean dependsOnLoad(FunctionPlanner.Decoded d, Map<Register, List<Integer>> writers,
                                         List<FunctionPlanner.Decoded> body) {
        for (MemoryAccess a : d.instruction().accesses()) {
            for (Register r : List.of(a.operand().base(), a.operand().index())) {
                if (r.isNone()) continue;
                for (int w : writers.getOrDefault(r.enclosing(), List.of())) {
                    if (!body.get(w).instruction().accesses().isEmpty()) return true;
                }
            }
        }
        return false;
    }

    /**
     * Whether the back edge's condition depends on data the body loads (a search: {@code while (a[i] > v)}),
     * rather than on induction and invariant registers alone (a counted loop). A search's trip count is the
     * data's: often a few iterations, too few for the entry and exit records to cost less than the strided
     * records of full mode, which the codec packs to almost nothing.
     */
    static boolean searches(List<FunctionPlanner.Decoded> body, int exit, Map<Register, List<Integer>> writers,
                                    Map<Register, Update> induction) {
        for (int p = exit - 1; p >= 0; p--) {
            Instruction insn = body.get(p).instruction();
            if (insn.registersWritten().stream().noneMatch(r -> r.equals(FLAGS))) continue;
            if (!insn.accesses().isEmpty()) return true;
            for (Operand o : insn.operands()) {
                if (!(o instanceof RegisterOperand r) || !r.read() || r.register().isNone()) continue;
                Register whole = r.register().enclosing();
                if (!whole.equals(FLAGS) && writers.containsKey(whole) && !induction.containsKey(whole)) return true;
            }
            return false;
        }
        return true;
    }

    /**
     * The registers {@code written} (in the order the body first writes them) in the order the planner tries
     * them as induction registers: the order a {@code HashMap} of their names filled by {@code computeIfAbsent}
     * iterates (which puts a key at the head of its bucket), as when the planner kept them so. That order decides which induction register counts the trips of a loop whose slots hold none (an
     * outer loop's, whose accesses its inner loops compute): keeping it keeps every build's skeleton section as
     * it was. Choosing the register the exit compares would be better founded; it would change builds.
     */
    static List<Register> triedInOrder(java.util.Collection<Register> written) {
        var byName = new java.util.HashMap<String, Register>();
        for (Register r : written) byName.computeIfAbsent(r.name(), k -> r);
        return List.copyOf(byName.values());
    }

    /** {@code r}'s slot, appended to {@code slots} when it has none yet; {@link LoopSkeleton#NONE} for no register. */
    static int slot(List<Register> slots, Register r) {
        if (r.isNone()) return NONE;
        int i = slots.indexOf(r);
        if (i >= 0) return i;
        slots.add(r);
        return slots.size() - 1;
    }
}
