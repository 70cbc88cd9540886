package org.memtrace.rewrite;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.memtrace.x86.Flow;
import org.memtrace.x86.ImmediateOperand;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryAccess;
import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.Operand;
import org.memtrace.x86.Register;
import org.memtrace.x86.RegisterOperand;

/**
 * Which consecutive parts of a trampoline share one group probe (docs/rewriting.md, "One probe for a run of
 * parts"), as {@code memtrace cc}'s {@code ProbeGroups} joins instructions: a part joins the probe of the
 * parts before it when its addresses can already be computed there. Every part before it in the run is a
 * copied instruction that falls through, none writes a register its addresses read, and %rsp is read only
 * while the run's moves of it are known (push, pop, add/sub of an immediate, lea from %rsp): its
 * {@code %rsp}-based addresses are then stepped by what those moved it. The run stays within
 * {@link #MAX_SITES} sites and leaves the probe its two scratch registers; a rep string instruction stays
 * alone and an {@code %fs} operand ends a run (its site must be the probe's last).
 */
final class ProbeRuns {
    /** As {@code ProbeGroups}: the sites one probe records at most. */
    static final int MAX_SITES = 8;

    private ProbeRuns() {}

    /**
     * The run starting at {@code parts.get(from)}: for each of its parts, in order, the difference between
     * %rsp when that part runs and %rsp at the run's probe. A part without sites starts no run (its own,
     * of one part, delta 0).
     */
    static List<Long> run(List<Decision.Part> parts, int from) {
        List<Long> deltas = new ArrayList<>(List.of(0L));
        Decision.Part first = parts.get(from);
        List<TrampolineWriter.Site> sites = new ArrayList<>(TrampolineWriter.sites(first, 0));
        if (sites.isEmpty() || first.repString() || endsRun(first, sites)) return deltas;
        Set<String> written = new HashSet<>();
        long delta = 0;
        boolean rspKnown = true;
        for (int k = from; k + 1 < parts.size(); k++) {
            Instruction done = parts.get(k).instruction();
            for (Register r : done.registersWritten()) if (!r.isStackPointer()) written.add(r.enclosing().name());
            Long step = rspStep(done);
            if (step == null) rspKnown = false;
            else delta += step;
            Decision.Part next = parts.get(k + 1);
            if (next.repString()) break;
            List<TrampolineWriter.Site> own = TrampolineWriter.sites(next, delta);
            boolean readsRsp = false, readsWritten = false;
            for (MemoryAccess a : next.accesses()) readsRsp |= a.operand().base().isStackPointer();
            for (TrampolineWriter.Site s : own) for (String r : s.reads()) readsWritten |= written.contains(r);
            if (readsWritten || (readsRsp && !rspKnown) || sites.size() + own.size() > MAX_SITES) break;
            List<TrampolineWriter.Site> joined = new ArrayList<>(sites);
            joined.addAll(own);
            if (!own.isEmpty() && !TrampolineWriter.hasScratch(joined.subList(0, joined.size() - 1))) break;
            sites = joined;
            deltas.add(delta);
            if (endsRun(next, own)) break;
        }
        return deltas;
    }

    /** Nothing joins after a part that does not fall through as a copy, or whose site reads %fs. */
    private static boolean endsRun(Decision.Part p, List<TrampolineWriter.Site> own) {
        if (p.move() != Decision.Move.COPY || p.instruction().flow() != Flow.SEQUENTIAL) return true;
        for (TrampolineWriter.Site s : own) if (s.fs()) return true;
        return false;
    }

    /** How {@code insn} moves %rsp: 0 when it does not write it, null when by an amount not known here. */
    static Long rspStep(Instruction insn) {
        boolean writes = false;
        for (Register r : insn.registersWritten()) writes |= r.isStackPointer();
        if (!writes) return 0L;
        List<Operand> explicit = new ArrayList<>();
        for (Operand o : insn.operands()) if (o.visibility() == Operand.Visibility.EXPLICIT) explicit.add(o);
        switch (insn.mnemonic()) {
            case "push", "pop" -> {
                if (explicit.size() == 1 && explicit.getFirst() instanceof RegisterOperand r && r.register().isStackPointer())
                    return null; // push %rsp is known, pop %rsp is not: neither joins a run
                for (MemoryAccess a : insn.accesses())
                    if (a.implicitStack()) return insn.mnemonic().equals("push") ? -(long) a.sizeBytes() : (long) a.sizeBytes();
                return null;
            }
            case "add", "sub" -> {
                if (explicit.size() == 2 && explicit.get(0) instanceof RegisterOperand r && r.register().isStackPointer()
                        && r.register().widthBits() == 64 && explicit.get(1) instanceof ImmediateOperand i)
                    // small positive immediates only: how a sign-extended imm8 reads is no concern then
                    return i.value() <= 0 || i.value() > 0x10000 ? null : insn.mnemonic().equals("add") ? i.value() : -i.value();
                return null;
            }
            case "lea" -> {
                if (explicit.size() == 2 && explicit.get(0) instanceof RegisterOperand r && r.register().isStackPointer()
                        && r.register().widthBits() == 64 && explicit.get(1) instanceof MemoryOperand m
                        && m.base().isStackPointer() && m.index().isNone())
                    return m.displacement();
                return null;
            }
            default -> {
                return null;
            }
        }
    }
}
