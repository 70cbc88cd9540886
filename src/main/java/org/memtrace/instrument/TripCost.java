package org.memtrace.instrument;

import static org.memtrace.instrument.AsmFacts.FLAGS;
import static org.memtrace.instrument.AsmFacts.jumpTargets;
import static org.memtrace.instrument.AsmFacts.number;
import static org.memtrace.instrument.AsmFacts.writes;
import static org.memtrace.instrument.LoopAnalysis.computedEveryIteration;
import static org.memtrace.instrument.LoopSkeleton.NONE;

import java.util.List;
import java.util.Set;
import org.memtrace.instrument.LoopSkeleton.Loop;
import org.memtrace.x86.Flow;
import org.memtrace.x86.ImmediateOperand;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.Operand;
import org.memtrace.x86.Register;
import org.memtrace.x86.RegisterOperand;

/**
 * Whether a loop with a constant trip count costs more in its own records than the full build's probes it
 * replaces (docs/compiled-in.md, "Never slower").
 */
final class TripCost {
    private TripCost() {
    }

    /**
     * Instructions of a probe's frame in an executable: the step over the red zone and back, two saves and
     * restores, the cursor's load, bump and store (docs/compiled-in.md, "An executable's group probe"). A
     * skeleton loop's entry and exit probes are two frames; the full build's probes of the same loop pay at
     * least one per entry (a loop that keeps its cursor in a register: its entry and exit code).
     */
    private static final int FRAME = 9;
    /** Instructions of one record in a probe: the address's {@code lea} and store, the site's {@code lea} and store. */
    private static final int RECORD = 4;
    /** Trip counts past this save more than any entry costs: the arithmetic need not go further. */
    private static final long MANY = 1 << 20;

    /**
     * Whether the loop's own records cost more per entry than the full build's probes they replace: the entry
     * and exit probes (two frames, a record per logged register and the exit's) against the records of the
     * accesses it computes in every iteration, over its iterations, and the one frame the full build pays at
     * least. Decided only when the trip count is a constant ({@link #constantTrips}); any other loop is kept,
     * since what its runs save is the data's (docs/compiled-in.md, "Never slower").
     */
    static boolean dearer(List<FunctionPlanner.Decoded> code, Candidate c, Loop loop) {
        long n = constantTrips(code, c, loop);
        if (n <= 0) return false;
        long skeleton = 2L * FRAME + RECORD * (loop.registers().size() + 1L);
        long full = FRAME + RECORD * Math.min(n, MANY) * computedEveryIteration(loop.items());
        return skeleton >= full;
    }

    /**
     * The number of iterations of every run of a loop whose trip register starts at a constant and is
     * compared with one (gcc's inner loop over a row of fixed length: {@code xor %esi,%esi; .L3: …; add
     * $1,%rsi; cmp $3,%rsi; jne .L3}), or 0 when that is not known: only for a loop entered by falling into
     * its first instruction and left by a {@code jne} at its bottom, the start value set in the straight code
     * before it, the bound an immediate or a register the body leaves alone, set there too.
     */
    static long constantTrips(List<FunctionPlanner.Decoded> code, Candidate c, Loop loop) {
        List<FunctionPlanner.Decoded> body = c.order();
        if (c.entryJump() >= 0 || c.mayBeEmpty() || c.exitTaken() || c.exit() != body.size() - 1) return 0;
        String jcc = c.end().text().mnemonic();
        int trip = loop.tripSlot();
        long step = loop.steps()[trip];
        if (!jcc.equals("jne") && !jcc.equals("jnz") || loop.stepSlots()[trip] != NONE || step == 0) return 0;
        Register r = loop.registers().get(trip);
        int update = -1, test = -1;
        for (int p = 0; p < c.exit(); p++) {
            Instruction i = body.get(p).instruction();
            if (writes(i, r)) update = p;
            if (writes(i, FLAGS)) test = p;
        }
        if (update < 0 || test < update) return 0;
        Long start = constantAtEntry(code, c.first(), r), bound = 0L;
        int width = 64;
        if (test > update) { // a compare after the update: an update that sets the flags itself compares with 0
            FunctionPlanner.Decoded t = body.get(test);
            if (!t.instruction().mnemonic().equals("cmp") || t.instruction().operands().size() < 2) return 0;
            bound = null;
            for (int o = 0; o < 2; o++) {
                if (!(t.instruction().operands().get(o) instanceof RegisterOperand reg)
                        || !reg.register().enclosing().equals(r)) continue;
                width = reg.register().widthBits();
                Operand other = t.instruction().operands().get(1 - o);
                String text = t.text().operands().size() == 2 ? t.text().operands().get(o).strip() : "";
                if (other instanceof ImmediateOperand && text.startsWith("$")) bound = number(text.substring(1));
                else if (other instanceof RegisterOperand s && s.register().widthBits() == width
                        && body.stream().noneMatch(d -> writes(d.instruction(), s.register().enclosing())))
                    bound = constantAtEntry(code, c.first(), s.register().enclosing());
            }
        }
        if (start == null || bound == null || width != 64 && width != 32) return 0;
        if (width == 32 && (start < 0 || start > Integer.MAX_VALUE || bound < 0 || bound > Integer.MAX_VALUE)) return 0;
        long distance = bound - start;
        if (distance % step != 0 || distance / step <= 0) return 0;
        return distance / step;
    }

    /**
     * The constant {@code r} holds when the code falls into position {@code first}: set by {@code mov $imm}
     * (a 32-bit move zero-extends) or zeroed by {@code xor} of itself in the straight code right before, with
     * no jump target in between; null otherwise.
     */
    static Long constantAtEntry(List<FunctionPlanner.Decoded> code, int first, Register r) {
        Set<Long> targets = jumpTargets(code);
        for (int p = first - 1; p >= 0; p--) {
            if (p + 1 < first && targets.contains(code.get(p + 1).instruction().address())) return null;
            Instruction i = code.get(p).instruction();
            if (i.flow() != Flow.SEQUENTIAL) return null;
            if (!writes(i, r)) continue;
            List<Operand> ops = i.operands();
            if (ops.size() < 2 || !(ops.get(0) instanceof RegisterOperand dst)) return null;
            int width = dst.register().widthBits();
            if (i.mnemonic().equals("xor") && ops.get(1) instanceof RegisterOperand src
                    && src.register().equals(dst.register()) && width >= 32) return 0L;
            List<String> text = code.get(p).text().operands();
            if (!i.mnemonic().equals("mov") || !(ops.get(1) instanceof ImmediateOperand) || text.size() != 2
                    || !text.getFirst().strip().startsWith("$")) return null;
            Long v = number(text.getFirst().strip().substring(1)); // a relocated immediate has a symbol: no number
            if (v == null || width != 32 && width != 64) return null;
            return width == 32 ? v & 0xffffffffL : v;
        }
        return null;
    }
}
