package org.memtrace.instrument;

import static org.memtrace.instrument.AsmFacts.label;
import static org.memtrace.instrument.Dominance.always;
import static org.memtrace.instrument.LoopAnalysis.analyze;
import static org.memtrace.instrument.LoopShapes.enteredAtTest;
import static org.memtrace.instrument.LoopShapes.enteredMid;
import static org.memtrace.instrument.LoopShapes.reshaped;
import static org.memtrace.instrument.LoopShapes.rotated;
import static org.memtrace.instrument.LoopShapes.shape;
import static org.memtrace.instrument.LoopShapes.testedAtTop;
import static org.memtrace.instrument.Nests.nest;
import static org.memtrace.instrument.TripCost.dearer;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.memtrace.format.SkeletonFormat.Condition;
import org.memtrace.format.SkeletonFormat;
import org.memtrace.select.FunctionModel;
import org.memtrace.x86.Flow;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.Register;

/**
 * The static side of skeleton traces (issue 10, Spindle's memory access skeleton): finds the innermost
 * loops of a function in the shapes gcc gives them (bottom-tested, entered by a jump to the bottom test,
 * tested at the top, rotated with the latch first; docs/compiled-in.md, "Skeleton loops"), each entered in
 * one place, left by one jump or by side exits ({@code break}), and whose blocks ({@code select}'s
 * {@link FunctionModel}) jump only forward inside it in iteration order. In each it finds the accesses whose
 * address is {@code disp + base + index*scale} with registers that the body never writes (invariant) or
 * writes exactly once, in a block that runs every iteration, by adding a constant (induction). Those accesses
 * lose their probe: the loop's entry logs the registers' values, its exit the final value of one induction
 * register, and the reader replays them.
 *
 * <p>A block that does not run every iteration (under an {@code if} in the body) runs in iterations the
 * replay cannot compute. When the body has a logged access that runs every iteration, the records keep the
 * iterations apart and the conditional blocks' accesses are all logged; otherwise each conditional block
 * with accesses gets a marker that logs the trip register's value when the block runs (a sparse log of the
 * branch outcome, from which the iteration follows) and its affine accesses are computed too. A block that
 * the loop's own registers decide ({@code if (i < k)}: a {@code cmp}/{@code test} of induction and invariant
 * registers and immediates before the one jump into it) gets a computed condition instead, and no probe.
 *
 * <p>Every other access of the body keeps its ordinary probe. A loop that does not fit is left as full mode
 * instruments it, with a reason the trace's summary reports.
 *
 * <p>This class holds the skeleton's model (the records {@link SkeletonWriter} writes) and the short planner
 * ({@link #plan}) that runs the pieces, one job each: {@link LoopShapes} finds the candidate loops and checks
 * their shape, {@link Dominance} which body positions run every iteration, {@link LoopAnalysis} (with
 * {@link Induction}) the induction registers and the computed and logged accesses, {@link Conditions} the
 * conditions the replay computes, {@link TripCost} whether a constant trip count pays for the loop's records,
 * {@link Nests} (with {@link AffineInterpreter}) outer loops that run inner ones whole. {@link AsmFacts} is what
 * they all ask of the assembly. Each piece has a unit test of its own on hand-written assembly (HandLoops,
 * HandAssembly): LoopShapesTest, DominanceTest, LoopAnalysisTest, InductionTest, ConditionsTest, TripCostTest,
 * NestsTest, AsmFactsTest.
 */
final class LoopSkeleton {
    static final int NONE = SkeletonFormat.NONE;
    /** An item's {@code cond}: a logged access of a conditional block, placed in its iteration by the records around it. */
    static final int OPTIONAL = SkeletonFormat.OPTIONAL;
    /** What analyzing a candidate gives: the skeleton loop, or the reason there is none. */
    sealed interface Outcome permits Loop, Reason {
    }

    /** Reasons a loop is not skeletonized, by their code in the {@code memtrace_skel} section. */
    enum Reason implements Outcome {
        CALL_IN_LOOP(2),
        ENTERED_BY_JUMP(3),
        INDIRECT_JUMP(4),
        REP_STRING(5),
        NO_INDUCTION(6),
        DEPENDS_ON_LOAD(7),
        NOT_AFFINE(8),
        LABEL(9),
        INNER_LOOP(10),
        EXIT_IN_BODY(11),
        ENTERED_IN_BODY(12),
        TOO_MANY_BLOCKS(14),
        SHORT_SEARCH(15),
        MOSTLY_LOGGED(16),
        TEST_NOT_COMPARE(17),
        FEW_ITERATIONS(18),
        LINK_MAY_RELAX(19),
        NEST_ENTRY(Reason.NEST_ENTRY_CODE),
        NEST_TRIP(Reason.NEST_TRIP_CODE);

        /** The codes of the outer-loop reasons, appended to the section's list (SkeletonFormat.REASONS). */
        static final int NEST_ENTRY_CODE = 20, NEST_TRIP_CODE = 21;

        final int code;
        /** What the summary says, as the format holds it for the reader. */
        final String text;

        Reason(int code) {
            this.code = code;
            this.text = SkeletonFormat.reason(code);
        }
    }

    /**
     * One body position in program order: a computed access (its site moved off the probe) or a logged site.
     *
     * @param phase bit 0: the base register's update comes before this access in the body; bit 1: the index's
     * @param cond  0: its block runs every iteration; m+1: it runs when marker m fires; {@link #OPTIONAL}
     * @param call  the site is a call's (its return address): the callee's records follow it, up to the loop's next record
     */
    record Item(int instruction, Site site, boolean computed, int baseSlot, int indexSlot, int scale, int phase,
                int cond, long displacement, boolean call) {
    }

    /**
     * A conditional block's marker: its probe goes before {@code instruction} (the block's first) and logs the
     * trip register; {@code item} is the block's first body position, {@code phase} whether the trip
     * register's update comes before the block. An {@code exit} marker is a side exit's instead (a
     * {@code break}: a conditional jump out of the middle of the body): its probe stands on the jump's taken
     * path ({@code taken}; else its fall-through path, which leaves the loop), and {@code item} is the first
     * body position after the jump; the run ends there.
     */
    record Marker(int instruction, int item, boolean phase, boolean exit, boolean taken, Condition condition) {
        Marker(int instruction, int item, boolean phase, boolean exit, boolean taken) {
            this(instruction, item, phase, exit, taken, null);
        }

        /** A marker whose block's running the replay computes: it has no probe. */
        boolean computed() { return condition != null; }
    }

    /**
     * A skeletonized loop.
     *
     * @param header    the label the back edge jumps to; the entry probe goes right before it (null: before
     *                  {@code entryJump})
     * @param entryJump the index of the jump that enters the loop, when it is entered by one
     * @param backEdge  the index of the loop's last jump in iteration order; the exit probe follows it on the
     *                  path that leaves the loop
     * @param exitTaken that jump leaves the loop when taken (the loop is rotated: its latch comes first)
     * @param mayBeEmpty a run may end at the loop's test before the first iteration's body
     * @param registers the 64-bit registers the entry logs (slots), with their per-iteration steps: the
     *                  constant {@code steps[s]} plus, unless {@code stepSlots[s]} is {@link #NONE}, the value of
     *                  that (invariant) slot
     * @param tripSlot  the induction slot whose final value the exit logs
     * @param exitItem  a loop tested at the top: the items before its test, which the iteration the run leaves
     *                  in runs too (0 for the other shapes)
     * @param tripBeforeExit a loop tested at the top whose trip register is updated before the test
     * @param entryTaken the entry jump is conditional: the entry probe stands on its taken path (its condition
     *                  inverted to skip the probe, as for a side exit)
     * @param entryItem a loop entered in the middle of its body: the body position its first iteration starts at
     *                  (0 for the other shapes)
     * @param entryMask the slots whose update comes before {@code entryItem} in the body, which the first,
     *                  partial iteration does not run
     */
    record Loop(String header, int entryJump, int backEdge, boolean exitTaken, boolean mayBeEmpty, List<Register> registers,
                long[] steps, int[] stepSlots, int tripSlot, List<Item> items, List<Marker> markers, int exitItem,
                boolean tripBeforeExit, boolean entryTaken, int entryItem, int entryMask, List<Nest> nests) implements Outcome {
        /** Whether the loop's test has code before it that the run's last, partial iteration runs. */
        boolean testedBelowTop() { return exitItem > 0 || tripBeforeExit; }

        /** Body positions, the inner loops' runs among them. */
        int positions() { return items.size() + nests.size(); }
    }

    /**
     * A value the outer loop computes from its registers as they are at the start of its iteration (each
     * one's entry value plus the iterations times its step): {@code constant + Σ terms[r] × r}, in 64-bit two's
     * complement.
     */
    record Affine(long constant, Map<Register, Long> terms) {
        static Affine of(long constant) { return new Affine(constant, Map.of()); }

        static Affine register(Register r) { return new Affine(0, Map.of(r, 1L)); }

        Affine plus(Affine o) {
            var t = new LinkedHashMap<>(terms);
            o.terms.forEach((r, c) -> t.merge(r, c, Long::sum));
            t.values().removeIf(c -> c == 0);
            return new Affine(constant + o.constant, Map.copyOf(t));
        }

        Affine times(long f) {
            var t = new LinkedHashMap<Register, Long>();
            terms.forEach((r, c) -> { if (c * f != 0) t.put(r, c * f); });
            return new Affine(constant * f, Map.copyOf(t));
        }
    }

    /**
     * An inner skeleton loop that the outer one runs whole in each iteration at combined body position
     * {@code item} (its items and the nests, in program order): its entry values, slot by slot, and its trip
     * register's final value, computed from the outer loop's registers. The inner loop has no probes of its own.
     */
    record Nest(int item, Loop inner, List<Affine> entry, Affine exit) {
    }

    /** Registers by name: the order a nest's terms and new slots take, the same in every build (a Map.copyOf's is not). */
    static final Comparator<Register> BY_NAME = Comparator.comparing(Register::name);

    /** {@code terms} ordered {@link #BY_NAME}. */
    static <V> TreeMap<Register, V> byName(Map<Register, V> terms) {
        var t = new TreeMap<Register, V>(BY_NAME);
        t.putAll(terms);
        return t;
    }

    /** A back edge that was not skeletonized; its jump's instruction index and why. */
    record Declined(int backEdge, Reason reason) {
    }

    record Result(List<Loop> loops, List<Declined> declined) {
    }

    private LoopSkeleton() {
    }
    /** Finds the function's skeleton loops and takes their computed sites out of {@code probes}. */
    static Result plan(List<FunctionPlanner.Decoded> code, FunctionModel model, Map<Integer, List<Site>> probes) {
        var loops = new ArrayList<Loop>();
        var declined = new ArrayList<Declined>();
        boolean indirect = false;
        Map<Instruction, Integer> at = new HashMap<>();
        for (int i = 0; i < code.size(); i++) {
            Instruction insn = code.get(i).instruction();
            at.put(insn, i);
            if (insn.flow() == Flow.JUMP && insn.branchTarget().isEmpty()) indirect = true;
        }
        var candidates = new ArrayList<Candidate>();
        Map<Integer, List<Site>> taken = new HashMap<>(); // the sites the loops computed, by instruction
        var rotated = new BitSet(); // code a rotated loop holds: its backward jumps are no loops of their own
        Map<Loop, Candidate> accepted = new java.util.IdentityHashMap<>(); // the skeleton loops so far, inner ones first
        for (int i = 0; i + 1 < code.size(); i++) {
            Candidate c = rotated(code, i);
            if (c == null) continue;
            candidates.add(c);
            rotated.set(c.first(), c.last() + 1);
        }
        for (int j = 0; j < code.size(); j++) {
            Instruction jump = code.get(j).instruction();
            boolean conditional = jump.flow() == Flow.CONDITIONAL_JUMP;
            if (!conditional && jump.flow() != Flow.JUMP || jump.branchTarget().isEmpty() || rotated.get(j)) continue;
            long target = jump.branchTarget().getAsLong();
            if (target > jump.address() || target < code.getFirst().instruction().address()) continue;
            int first = j;
            while (first > 0 && code.get(first - 1).instruction().address() >= target) first--;
            if (!conditional) {
                Candidate c = testedAtTop(code, first, j);
                if (c != null) candidates.add(c);
                continue;
            }
            if (code.get(first).instruction().address() != target) {
                declined.add(new Declined(code.get(j).index(), Reason.LABEL)); // the target is inside an instruction: no label there
                continue;
            }
            candidates.add(enteredAtTest(code, first, j));
        }
        candidates.sort(Comparator.comparingInt(Candidate::last));
        Map<Integer, Integer> outermost = new HashMap<>(); // per first instruction, the candidate ending last
        for (Candidate c : candidates) outermost.merge(c.first(), c.last(), Math::max);
        for (Candidate found : candidates) {
            if (found.last() < outermost.get(found.first())) continue; // its jump back is a continue of the loop ending later
            Candidate c = found;
            FunctionPlanner.Decoded end = c.end();
            Reason reason = indirect ? Reason.INDIRECT_JUMP : shape(code, c, at);
            if (reason == Reason.ENTERED_IN_BODY) {
                Candidate m = enteredMid(code, c, candidates);
                Reason r = m == null ? reason : shape(code, m, at);
                if (r == Reason.EXIT_IN_BODY) {
                    Candidate s = reshaped(code, m);
                    if (s != null && shape(code, s, at) == null) r = null;
                    if (r == null) m = s;
                }
                if (r == null) {
                    c = m;
                    reason = null;
                }
            }
            if (reason == Reason.ENTERED_IN_BODY || reason == Reason.EXIT_IN_BODY) {
                Candidate r = reshaped(code, c);
                if (r != null && shape(code, r, at) == null) {
                    c = r;
                    reason = null;
                }
            }
            boolean outer = reason == Reason.INNER_LOOP; // an outer loop: nest() checks its shape without its inner loops
            if (outer) reason = null;
            if (reason == null) reason = c.declined();
            if (reason == null && c.entryJump() < 0 && label(c.order().getLast()) == null) reason = Reason.LABEL;
            if (reason == null && c.exitTaken() && (label(end) == null || inverse(end.text().mnemonic()) == null)) reason = Reason.LABEL;
            if (reason == null && c.entryTaken()) {
                FunctionPlanner.Decoded j = code.get(c.entryJump());
                if (label(j) == null || inverse(j.text().mnemonic()) == null) reason = Reason.LABEL;
            }
            if (reason == null) {
                Outcome r = outer ? nest(code, c, at, model, probes, accepted) : analyze(c, always(c, model), probes);
                if (!outer && r instanceof Loop loop && dearer(code, c, loop)) r = Reason.FEW_ITERATIONS;
                switch (r) {
                    case Loop loop -> {
                        for (Nest n : loop.nests()) { // an inner loop counted by another slot than its own choice: that copy
                            if (accepted.containsKey(n.inner())) continue;
                            for (int i = 0; i < loops.size(); i++) {
                                if (loops.get(i).backEdge() != n.inner().backEdge()) continue;
                                accepted.put(n.inner(), accepted.remove(loops.get(i)));
                                loops.set(i, n.inner());
                            }
                        }
                        loops.add(loop);
                        accepted.put(loop, c);
                        for (Item item : loop.items()) if (item.computed()) taken.put(item.instruction(), probes.remove(item.instruction()));
                        continue;
                    }
                    case Reason why -> reason = why;
                }
            }
            declined.add(new Declined(end.index(), reason));
        }
        // a conditional entry jump gets inverted around the entry probe: it must not be another loop's back
        // edge or side exit (a jump of a block spliced in from after the function), whose text is rewritten too
        var rewritten = new HashSet<Integer>();
        for (Loop l : loops) {
            rewritten.add(l.backEdge());
            for (Marker m : l.markers()) if (m.exit()) rewritten.add(m.instruction());
        }
        for (int i = loops.size() - 1; i >= 0; i--) {
            Loop l = loops.get(i);
            if (!l.entryTaken() || !rewritten.contains(l.entryJump())) continue;
            loops.remove(i);
            for (Item item : l.items()) if (item.computed()) probes.put(item.instruction(), taken.get(item.instruction()));
            declined.add(new Declined(l.backEdge(), Reason.ENTERED_IN_BODY));
        }
        return new Result(loops, declined);
    }

    /** The mnemonic of the conditional jump taken exactly when {@code jcc} is not; null for one this rewriter does not know. */
    static String inverse(String jcc) {
        return AsmFacts.inverse(jcc);
    }

    /** The nest's computed values: the inner loop's entry values, slot by slot, then its trip register's final value. */
    static List<Affine> values(Nest n) {
        var all = new ArrayList<>(n.entry());
        all.add(n.exit());
        return all;
    }
}
