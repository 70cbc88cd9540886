package org.memtrace.instrument;

import org.memtrace.format.SiteFormat;
import org.memtrace.format.SkeletonFormat;
import org.memtrace.format.SkeletonFormat.Condition;

import org.memtrace.select.BasicBlock;
import org.memtrace.select.BlockModel;
import org.memtrace.select.FunctionModel;
import org.memtrace.x86.Flow;
import org.memtrace.x86.ImmediateOperand;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryAccess;
import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.Operand;
import org.memtrace.x86.Register;
import org.memtrace.x86.RegisterOperand;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

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
 */
final class LoopSkeleton {
    static final int NONE = SkeletonFormat.NONE;
    private static final String FLAGS = "rflags";
    /** An item's {@code cond}: a logged access of a conditional block, placed in its iteration by the records around it. */
    static final int OPTIONAL = SkeletonFormat.OPTIONAL;
    /** Markers a loop may have: {@code cond} m+1 must stay below {@link #OPTIONAL}. */
    private static final int MAX_MARKERS = 200;
    /**
     * The registers a call writes as far as the loop can tell: its result. Compiled code reads any other register
     * after a call only when the callee keeps it (the ABI's callee-saved ones, and whichever others gcc's
     * {@code -fipa-ra} knows a callee in the same file leaves alone: gcc -O2 keeps a loop's index in %r8
     * across such a call), so a register the body reads again next iteration survives the call.
     */
    private static final List<String> CALL_RESULT = List.of("rax", "rdx");

    /** Reasons a loop is not skeletonized, by their code in the {@code memtrace_skel} section. */
    enum Reason {
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
    record Loop(String header, int entryJump, int backEdge, boolean exitTaken, boolean mayBeEmpty, List<String> registers,
                long[] steps, int[] stepSlots, int tripSlot, List<Item> items, List<Marker> markers, int exitItem,
                boolean tripBeforeExit, boolean entryTaken, int entryItem, int entryMask, List<Nest> nests) {
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
    record Affine(long constant, Map<String, Long> terms) {
        static Affine of(long constant) { return new Affine(constant, Map.of()); }

        static Affine register(String r) { return new Affine(0, Map.of(r, 1L)); }

        Affine plus(Affine o) {
            var t = new LinkedHashMap<>(terms);
            o.terms.forEach((r, c) -> t.merge(r, c, Long::sum));
            t.values().removeIf(c -> c == 0);
            return new Affine(constant + o.constant, Map.copyOf(t));
        }

        Affine times(long f) {
            var t = new LinkedHashMap<String, Long>();
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

    /** An induction register's update: at body position {@code at}, by {@code step} plus an invariant register's value. */
    private record Update(int at, long step, String register) {
    }

    /** A back edge that was not skeletonized; its jump's instruction index and why. */
    record Declined(int backEdge, Reason reason) {
    }

    record Result(List<Loop> loops, List<Declined> declined) {
    }

    private LoopSkeleton() {
    }

    /**
     * Where a candidate loop's code lies and how it is run. {@code order}: the body in iteration order (from
     * the instruction an iteration starts with to the jump that ends it); the code indices {@code first} …
     * {@code last} hold it, in address order. {@code entryJump}: the index of the jump outside the body that
     * enters it (-1 when the loop is entered by falling into its first instruction). {@code exit}: the
     * position in the order of the one jump that leaves the loop: the last one, or the test that starts
     * every iteration (a loop tested at the top, -Os), whose code before it only compares registers.
     * {@code exitTaken}: that jump leaves the loop when taken (else by falling through). {@code mayBeEmpty}:
     * a run can end at the loop's test before any iteration's body. {@code declined}: why a loop of a known
     * shape cannot be followed anyway, or null. {@code entryAt}: the address the entry jump goes to when the
     * first iteration starts there, in the middle of the body (-1: at the body's first instruction, or at a
     * test that only compares); {@code entryTaken}: that jump is conditional.
     */
    private record Candidate(List<FunctionPlanner.Decoded> order, int first, int last, int entryJump, int entryInstruction,
                             int exit, boolean exitTaken, boolean mayBeEmpty, Reason declined, long entryAt, boolean entryTaken) {
        Candidate(List<FunctionPlanner.Decoded> order, int first, int last, int entryJump, int entryInstruction,
                  int exit, boolean exitTaken, boolean mayBeEmpty, Reason declined) {
            this(order, first, last, entryJump, entryInstruction, exit, exitTaken, mayBeEmpty, declined, -1, false);
        }

        FunctionPlanner.Decoded end() { return order.get(exit); }
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
                Object r = outer ? nest(code, c, at, model, probes, accepted) : analyze(c, always(c, model), probes);
                if (!outer && r instanceof Loop loop && dearer(code, c, loop)) r = Reason.FEW_ITERATIONS;
                if (r instanceof Loop loop) {
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
                reason = (Reason) r;
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

    /**
     * The loop whose back edge {@code last} jumps to {@code first}: entered by falling into {@code first}, or
     * (gcc's {@code jmp .Ltest} rotation, -O1 and -Os) by the jump right before it to a test at the bottom of
     * the body that only compares registers; then the first run may stop at the test.
     */
    private static Candidate enteredAtTest(List<FunctionPlanner.Decoded> code, int first, int last) {
        List<FunctionPlanner.Decoded> body = code.subList(first, last + 1);
        if (first > 0) {
            Instruction before = code.get(first - 1).instruction();
            long start = code.get(first).instruction().address(), end = code.get(last).instruction().address();
            if (before.flow() == Flow.JUMP && before.branchTarget().isPresent()) {
                long t = before.branchTarget().getAsLong();
                int test = -1;
                for (int i = first + 1; i <= last; i++) if (code.get(i).instruction().address() == t) test = i;
                if (t > start && t <= end && test > 0 && onlyCompares(code.subList(test, last))) {
                    return new Candidate(body, first, last, first - 1, code.get(first - 1).index(), body.size() - 1, false, true, null);
                }
                if (t > start && t <= end && test > 0) {
                    // the first iteration starts at that code, which loads or steps: a run begins with a partial iteration
                    Candidate mid = new Candidate(body, first, last, first - 1, code.get(first - 1).index(), body.size() - 1,
                            false, false, null, t, false);
                    if (reachable(body, t)) return mid;
                    return new Candidate(body, first, last, first - 1, -1, body.size() - 1, false, true, Reason.TEST_NOT_COMPARE);
                }
            }
        }
        return new Candidate(body, first, last, -1, -1, body.size() - 1, false, false, null);
    }

    /**
     * The loop of the jump back {@code last} to a test at the top of the body, which leaves the loop when
     * taken (-Os: {@code .L2: cmp; jge .Lout; body; jmp .L2}); a run may leave at its first test. Null when
     * the body does not start with such a test.
     */
    private static Candidate testedAtTop(List<FunctionPlanner.Decoded> code, int first, int last) {
        long start = code.get(first).instruction().address(), end = code.get(last).instruction().address();
        for (int i = first; i < last; i++) {
            Instruction insn = code.get(i).instruction();
            if (insn.flow() != Flow.CONDITIONAL_JUMP) continue;
            long t = insn.branchTarget().orElse(start);
            if (t >= start && t <= end) return null;
            // code before the test that does more than compare: only with the exit past the jump back (-Os's
            // layout), not for a block laid out after a loop whose jump back runs into that loop's own test
            if (!onlyCompares(code.subList(first, i)) && !(straight(code.subList(first, i)) && t > end)) return null;
            return new Candidate(code.subList(first, last + 1), first, last, -1, -1, i - first, true, true, null);
        }
        return null;
    }

    /**
     * The candidate with its body's blocks where its iterations run them, or null when that changes nothing
     * or leaves a fall-through the order cannot follow. Two layouts of gcc's: a block of the body laid out
     * after the loop (cold code, {@code __builtin_expect}), entered by a jump from the body and ending in an
     * unconditional jump back into it, goes into the order right before the position it jumps back to; and a
     * block that leaves the loop by {@code ret} or by a jump out, entered only by falling through a conditional
     * jump of the body, is taken out: that jump becomes a side exit whose fall-through leaves the loop (its
     * marker stands at the block's start), and the block keeps the probes of code outside any loop.
     */
    private static Candidate reshaped(List<FunctionPlanner.Decoded> code, Candidate c) {
        Map<Long, Integer> index = new HashMap<>();
        for (int i = 0; i < code.size(); i++) index.put(code.get(i).instruction().address(), i);
        var order = new ArrayList<>(c.order());
        boolean changed = false;
        for (boolean spliced = true; spliced; ) {
            spliced = false;
            Map<Long, Integer> position = positions(order);
            for (int p = 0; p < order.size() && !spliced; p++) {
                Instruction jump = order.get(p).instruction();
                if (jump.flow() != Flow.JUMP && jump.flow() != Flow.CONDITIONAL_JUMP || jump.branchTarget().isEmpty()) continue;
                Integer t = index.get(jump.branchTarget().getAsLong());
                if (t == null || t <= c.last() || position.containsKey(jump.branchTarget().getAsLong())) continue;
                List<FunctionPlanner.Decoded> block = outOfLine(code, t);
                if (block == null) continue;
                Integer back = position.get(block.getLast().instruction().branchTarget().getAsLong());
                if (back == null || back <= p) continue;
                order.addAll(back, block);
                spliced = changed = true;
            }
        }
        Set<Long> targets = jumpTargets(code);
        for (int q = 0; q < order.size() - 1; q++) {
            Instruction x = order.get(q).instruction();
            boolean leaves = x.flow() == Flow.RETURN || x.flow() == Flow.TRAP || x.flow() == Flow.JUMP
                    && x.branchTarget().isPresent() && !positions(order).containsKey(x.branchTarget().getAsLong());
            if (!leaves) continue;
            int b = q;
            while (b > 0 && fallsInto(order.get(b - 1), order.get(b))
                    && (order.get(b - 1).instruction().flow() == Flow.SEQUENTIAL || order.get(b - 1).instruction().flow() == Flow.CALL)) b--;
            if (b == 0) continue;
            Instruction jcc = order.get(b - 1).instruction();
            if (jcc.flow() != Flow.CONDITIONAL_JUMP || !fallsInto(order.get(b - 1), order.get(b))
                    || !positions(order).containsKey(jcc.branchTarget().getAsLong())) continue;
            boolean enteredInside = false;
            for (int k = b + 1; k <= q; k++) enteredInside |= targets.contains(order.get(k).instruction().address());
            if (enteredInside) continue;
            order.subList(b, q + 1).clear();
            q = b - 1;
            changed = true;
        }
        if (!changed) return null;
        Map<Long, Integer> position = positions(order);
        for (int p = 0; p < order.size() - 1; p++) {
            Instruction i = order.get(p).instruction();
            if (i.flow() == Flow.JUMP || i.flow() == Flow.RETURN || i.flow() == Flow.TRAP) continue;
            Integer next = position.get(i.nextAddress());
            if (next == null ? i.flow() != Flow.CONDITIONAL_JUMP : next <= p) return null; // a fall-through out or backwards
        }
        int exit = order.indexOf(c.end());
        if (exit < 0 || order.getLast() != c.order().getLast()) return null;
        if (c.entryAt() >= 0 && !reachable(order, c.entryAt())) return null;
        return new Candidate(List.copyOf(order), c.first(), c.last(), c.entryJump(), c.entryInstruction(), exit,
                c.exitTaken(), c.mayBeEmpty(), c.declined(), c.entryAt(), c.entryTaken());
    }

    /**
     * The candidate entered in the middle of its body by one jump from outside (gcc's rotation of a loop whose
     * test it did not copy: {@code jmp .L4; .L3: A; .L4: B; jcc .L3}, or the same jump from code before it, or
     * a conditional one, -O2's {@code jg .L4}): its first iteration starts at that jump's target and runs to the
     * end of the body, the others run the whole body. Null when the loop can be entered any other way (by
     * falling into its first instruction, a second jump), the jump lies inside another candidate (where its
     * own probes or inversion belong to that loop), or the body cannot reach the target from its first
     * instruction (then the blocks that run every iteration would not be those the partial one runs).
     */
    private static Candidate enteredMid(List<FunctionPlanner.Decoded> code, Candidate c, List<Candidate> candidates) {
        if (c.entryJump() >= 0 || c.exitTaken() || c.exit() != c.order().size() - 1 || c.first() == 0) return null;
        Flow before = code.get(c.first() - 1).instruction().flow();
        if (before != Flow.JUMP && before != Flow.RETURN && before != Flow.TRAP) return null; // nothing falls in
        Map<Long, Integer> position = positions(c.order());
        int entry = -1;
        for (int i = 0; i < code.size(); i++) {
            Instruction insn = code.get(i).instruction();
            if (position.containsKey(insn.address()) || insn.flow() == Flow.CALL || insn.branchTarget().isEmpty()) continue;
            Integer t = position.get(insn.branchTarget().getAsLong());
            if (t == null) continue;
            if (entry >= 0 || t == 0 || insn.flow() != Flow.JUMP && insn.flow() != Flow.CONDITIONAL_JUMP) return null;
            entry = i;
        }
        if (entry < 0) return null;
        for (Candidate o : candidates) {
            if (o != c && (o.entryJump() == entry || entry >= o.first() && entry <= o.last())) return null;
        }
        long target = code.get(entry).instruction().branchTarget().getAsLong();
        if (!reachable(c.order(), target)) return null;
        return new Candidate(c.order(), c.first(), c.last(), entry, code.get(entry).index(), c.exit(), false, false, null,
                target, code.get(entry).instruction().flow() == Flow.CONDITIONAL_JUMP);
    }

    /** Whether the body, in iteration order with its jumps going forward, reaches {@code target} from its first instruction. */
    private static boolean reachable(List<FunctionPlanner.Decoded> order, long target) {
        Map<Long, Integer> position = positions(order);
        Integer goal = position.get(target);
        if (goal == null || goal == 0) return false;
        boolean[] reach = new boolean[order.size()];
        reach[0] = true;
        for (int p = 0; p < goal; p++) {
            if (!reach[p]) continue;
            Instruction i = order.get(p).instruction();
            if (i.flow() != Flow.JUMP && i.flow() != Flow.RETURN && i.flow() != Flow.TRAP) {
                Integer next = position.get(i.nextAddress());
                if (next != null && next > p) reach[next] = true;
            }
            if (i.flow() != Flow.CALL && i.branchTarget().isPresent()) {
                Integer t = position.get(i.branchTarget().getAsLong());
                if (t != null && t > p) reach[t] = true;
            }
        }
        return reach[goal];
    }

    /**
     * The block at code index {@code t} when it is code of a loop laid out elsewhere: nothing falls into it,
     * and it runs straight (calls and conditional jumps allowed) to an unconditional jump; null otherwise.
     */
    private static List<FunctionPlanner.Decoded> outOfLine(List<FunctionPlanner.Decoded> code, int t) {
        if (t == 0) return null;
        Flow before = code.get(t - 1).instruction().flow();
        if (before != Flow.JUMP && before != Flow.RETURN && before != Flow.TRAP) return null;
        for (int e = t; e < code.size(); e++) {
            Instruction i = code.get(e).instruction();
            if (i.flow() == Flow.JUMP) return i.branchTarget().isPresent() ? code.subList(t, e + 1) : null;
            if (i.flow() != Flow.SEQUENTIAL && i.flow() != Flow.CALL && i.flow() != Flow.CONDITIONAL_JUMP) return null;
        }
        return null;
    }

    private static boolean fallsInto(FunctionPlanner.Decoded a, FunctionPlanner.Decoded b) {
        return a.instruction().nextAddress() == b.instruction().address();
    }

    private static Map<Long, Integer> positions(List<FunctionPlanner.Decoded> order) {
        Map<Long, Integer> position = new HashMap<>();
        for (int p = 0; p < order.size(); p++) position.put(order.get(p).instruction().address(), p);
        return position;
    }

    /**
     * Whether the code runs straight through, no jump and no call: the top of a loop tested at the top, which
     * runs once more in the iteration the run leaves at its test (a load of {@code while (p[i] >= 0)}, an
     * update of the counter before the test).
     */
    private static boolean straight(List<FunctionPlanner.Decoded> code) {
        for (FunctionPlanner.Decoded d : code) if (d.instruction().flow() != Flow.SEQUENTIAL) return false;
        return true;
    }

    /** Whether the code reads no memory and writes no register but the flags: a loop test the entry may start with. */
    private static boolean onlyCompares(List<FunctionPlanner.Decoded> code) {
        for (FunctionPlanner.Decoded d : code) {
            Instruction i = d.instruction();
            if (!i.accesses().isEmpty() || i.flow() != Flow.SEQUENTIAL) return false;
            for (Register r : i.registersWritten()) if (!r.name().equals(FLAGS)) return false;
        }
        return true;
    }

    /**
     * gcc's rotated loop with the latch first (-O1 with an {@code if} in the body): {@code jmp H} at
     * {@code i}, then the latch from {@code i+1} up to a conditional jump out of the loop that falls into
     * {@code H}, then the header's blocks down to a jump back into the latch (when it is conditional, its
     * fall-through is a side exit: a {@code break} at -O2). An iteration runs from {@code H} to that jump,
     * then the latch; null when the code is not that shape.
     */
    private static Candidate rotated(List<FunctionPlanner.Decoded> code, int i) {
        Instruction jmp = code.get(i).instruction();
        if (jmp.flow() != Flow.JUMP || jmp.branchTarget().isEmpty()) return null;
        long h = jmp.branchTarget().getAsLong(), s = code.get(i + 1).instruction().address();
        if (h <= s) return null;
        int header = -1;
        for (int k = i + 2; k < code.size() && code.get(k).instruction().address() <= h; k++)
            if (code.get(k).instruction().address() == h) header = k;
        if (header < 0) return null;
        Instruction exit = code.get(header - 1).instruction();
        if (exit.flow() != Flow.CONDITIONAL_JUMP || exit.branchTarget().isEmpty()) return null;
        int last = -1;
        for (int k = header; k < code.size(); k++) {
            Instruction insn = code.get(k).instruction();
            if (insn.flow() == Flow.CALL || insn.branchTarget().isEmpty()) continue;
            long t = insn.branchTarget().getAsLong();
            if (t >= s && t < h) last = k;
        }
        if (last < 0 || code.get(last).instruction().flow() == Flow.CALL) return null;
        long t = exit.branchTarget().getAsLong();
        if (t >= s && t <= code.get(last).instruction().address()) return null;
        var order = new ArrayList<FunctionPlanner.Decoded>(code.subList(header, last + 1));
        order.addAll(code.subList(i + 1, header));
        return new Candidate(List.copyOf(order), i + 1, last, i, code.get(i).index(), order.size() - 1, true, false, null);
    }

    /**
     * Why the candidate is no loop the replay can follow, or null: every run must enter where the candidate
     * says (the fall into its first instruction or its one entry jump), leave only by its last jump in
     * iteration order, and run its blocks in that order once per iteration.
     */
    private static Reason shape(List<FunctionPlanner.Decoded> code, Candidate c, Map<Instruction, Integer> at) {
        return shape(code, c, at, new BitSet());
    }

    /** As above, passing the jumps of the code indices in {@code inner} (an outer loop's inner loops, checked by their own). */
    private static Reason shape(List<FunctionPlanner.Decoded> code, Candidate c, Map<Instruction, Integer> at, BitSet inner) {
        Map<Long, Integer> position = new HashMap<>();
        for (int p = 0; p < c.order().size(); p++) position.put(c.order().get(p).instruction().address(), p);
        long start = c.order().getFirst().instruction().address();
        int end = c.order().size() - 1;
        for (int i = 0; i < code.size(); i++) {
            Instruction insn = code.get(i).instruction();
            Integer p = position.get(insn.address()); // a reshaped body holds code outside first … last, and not all of it
            if (p != null && insn.rep()) return Reason.REP_STRING;
            if (p != null && p < end && (insn.flow() == Flow.RETURN || insn.flow() == Flow.TRAP)) return Reason.EXIT_IN_BODY;
            if (insn.flow() == Flow.CALL || insn.branchTarget().isEmpty() || (p != null && (p == end || p == c.exit())) || inner.get(i)) continue;
            Integer t = position.get(insn.branchTarget().getAsLong());
            if (p == null) {
                if (i == c.entryJump()) continue;
                if (t != null && t == 0) return Reason.ENTERED_BY_JUMP;
                if (t != null) return Reason.ENTERED_IN_BODY;
            } else if (t == null) {
                if (insn.flow() != Flow.CONDITIONAL_JUMP) return Reason.EXIT_IN_BODY; // a side exit needs a condition to invert
            } else if (t == 0 && insn.branchTarget().getAsLong() == start) {
                continue; // a continue: the iteration ends here, what follows it in the body is conditional (always)
            } else if (t <= p) {
                return Reason.INNER_LOOP;
            }
        }
        return null;
    }

    /**
     * Which body positions run every iteration: those of the blocks that dominate the last block of the
     * iteration order and every block that ends in a {@code continue} (a jump back to the body's start, which
     * ends its iteration early). The body's other jumps all go forward in that order (checked by
     * {@link #shape}), so a block's predecessors come before it and one pass in order computes the dominators.
     */
    private static boolean[] always(Candidate c, FunctionModel model) {
        List<FunctionPlanner.Decoded> body = c.order();
        Map<Long, Integer> position = new HashMap<>();
        for (int p = 0; p < body.size(); p++) position.put(body.get(p).instruction().address(), p);
        long end = body.getLast().instruction().address();
        List<BasicBlock> blocks = new ArrayList<>();
        for (BlockModel b : model.blocks()) if (position.containsKey(b.block().start())) blocks.add(b.block());
        blocks.sort(Comparator.comparingInt(b -> position.get(b.start())));
        Map<Long, Integer> byStart = new HashMap<>();
        for (int b = 0; b < blocks.size(); b++) byStart.put(blocks.get(b).start(), b);
        // the block that follows a block in the function by address (whatever padding lies between), by its last instruction
        List<BasicBlock> all = new ArrayList<>();
        for (BlockModel b : model.blocks()) all.add(b.block());
        all.sort(Comparator.comparingLong(BasicBlock::start));
        Map<Long, Long> following = new HashMap<>();
        for (int b = 0; b + 1 < all.size(); b++) following.put(all.get(b).instructions().getLast().address(), all.get(b + 1).start());
        BitSet[] dom = new BitSet[blocks.size()];
        List<List<Integer>> preds = new ArrayList<>();
        for (int b = 0; b < blocks.size(); b++) preds.add(new ArrayList<>());
        for (int b = 0; b < blocks.size(); b++) {
            Instruction last = blocks.get(b).instructions().getLast();
            if (last.address() == end) continue; // the loop's own jump
            if (last.flow() != Flow.JUMP) {
                Integer next = byStart.get(last.nextAddress());
                // an inner loop's header is aligned: padding lies between the code before it and its label
                if (next == null) next = byStart.get(following.getOrDefault(last.address(), -1L));
                if (next != null) preds.get(next).add(b);
            }
            if (last.flow() != Flow.CALL && last.branchTarget().isPresent()) {
                Integer t = byStart.get(last.branchTarget().getAsLong());
                if (t != null && t > b) preds.get(t).add(b); // a back edge (an inner loop's, a continue's) decides no dominator
            }
        }
        for (int b = 0; b < blocks.size(); b++) {
            var d = new BitSet();
            if (b > 0) {
                boolean any = false;
                for (int p : preds.get(b)) {
                    if (!any) d.or(dom[p]); else d.and(dom[p]);
                    any = true;
                }
            }
            d.set(b);
            dom[b] = d;
        }
        BitSet latch = (BitSet) dom[blocks.size() - 1].clone();
        long start = body.getFirst().instruction().address();
        for (int b = 0; b < blocks.size(); b++) {
            Instruction last = blocks.get(b).instructions().getLast();
            if (last.address() != end && last.flow() != Flow.CALL && last.branchTarget().isPresent()
                    && last.branchTarget().getAsLong() == start) latch.and(dom[b]);
        }
        boolean[] runs = new boolean[body.size()];
        for (int b = 0; b < blocks.size(); b++) {
            if (!latch.get(b)) continue;
            for (Instruction i : blocks.get(b).instructions()) runs[position.get(i.address())] = true;
        }
        return runs;
    }

    /** The mnemonic of the conditional jump taken exactly when {@code jcc} is not; null for one this rewriter does not know. */
    static String inverse(String jcc) {
        String[][] pairs = {{"je", "jne"}, {"jz", "jnz"}, {"jl", "jge"}, {"jnge", "jnl"}, {"jle", "jg"}, {"jng", "jnle"},
                {"jb", "jae"}, {"jnae", "jnb"}, {"jc", "jnc"}, {"jbe", "ja"}, {"jna", "jnbe"}, {"js", "jns"}, {"jo", "jno"},
                {"jp", "jnp"}, {"jpe", "jpo"}};
        for (String[] p : pairs) {
            if (p[0].equals(jcc)) return p[1];
            if (p[1].equals(jcc)) return p[0];
        }
        return null;
    }

    /** The back edge's target label when it is a plain {@code .L} label the probe can be written before. */
    private static String label(FunctionPlanner.Decoded jump) {
        List<String> operands = jump.text().operands();
        if (operands.size() != 1) return null;
        String l = operands.getFirst().strip();
        return l.startsWith(".L") && l.matches("[.A-Za-z0-9_$]+") ? l : null;
    }

    /** The loop, or the reason it is not one the skeleton handles; {@code always[p]}: body position p runs every iteration. */
    private static Object analyze(Candidate loop, boolean[] always, Map<Integer, List<Site>> probes) {
        return analyze(loop, always, probes, 0);
    }

    /** As above for an outer loop whose inner loops compute {@code nested} accesses in every iteration too. */
    private static Object analyze(Candidate loop, boolean[] always, Map<Integer, List<Site>> probes, int nested) {
        List<FunctionPlanner.Decoded> body = loop.order();
        Map<String, List<Integer>> writers = new HashMap<>();
        for (int p = 0; p < body.size(); p++) {
            Instruction insn = body.get(p).instruction();
            for (Register r : insn.registersWritten()) writers.computeIfAbsent(r.name(), k -> new ArrayList<>()).add(p);
            // the replay expects a logged site's records in every run, but the link may relax this one to nothing
            List<Site> linked = probes.get(body.get(p).index());
            if (linked != null && linked.stream().anyMatch(s -> (s.flags() & SiteFormat.FLAG_KEPT_WHERE_LINKED) != 0))
                return Reason.LINK_MAY_RELAX;
            if (insn.flow() != Flow.CALL) continue;
            // the callee's records say nothing of where it starts: the call's own record (its return address) must
            if (probes.get(body.get(p).index()) == null) return Reason.CALL_IN_LOOP;
            for (String r : CALL_RESULT) writers.computeIfAbsent(r, k -> new ArrayList<>()).add(p);
        }
        Map<String, Update> induction = new LinkedHashMap<>();
        writers.forEach((r, at) -> {
            if (at.size() == 1 && always[at.getFirst()]) {
                Update u = update(body.get(at.getFirst()), r, at.getFirst(), writers);
                if (u != null && (u.step() != 0 || u.register() != null)) induction.put(r, u);
            }
        });
        if (induction.isEmpty()) return Reason.NO_INDUCTION;

        // the records of a logged access that runs every iteration keep the iterations apart; without one,
        // each conditional block with accesses needs a marker to say in which iteration it ran
        boolean anchored = false;
        for (int p = 0; p < body.size(); p++) {
            List<Site> sites = probes.get(body.get(p).index());
            if (sites != null && always[p] && affine(body.get(p), sites, writers, induction) == null) anchored = true;
        }
        var slots = new ArrayList<String>();
        var items = new ArrayList<Item>();
        var markers = new ArrayList<Marker>();
        var markerAt = new ArrayList<Integer>(); // body position of each marker's block start or side exit
        var inside = new HashSet<Long>();
        for (FunctionPlanner.Decoded d : body) inside.add(d.instruction().address());
        boolean computed = nested > 0;
        boolean onLoad = false;
        int block = 0, marked = -1, exitItem = 0, entryItem = 0;
        int entryPos = loop.entryAt() < 0 ? 0 : positions(body).get(loop.entryAt());
        boolean top = loop.exit() < body.size() - 1; // tested at the top: its test is not the body's last jump
        for (int p = 0; p < body.size(); p++) {
            FunctionPlanner.Decoded d = body.get(p);
            if (top && p == loop.exit()) exitItem = items.size();
            if (p == entryPos) entryItem = items.size();
            if (blockStart(body, p)) block = p;
            Instruction insn = d.instruction();
            boolean out = p != loop.exit() && p != body.size() - 1 && insn.flow() == Flow.CONDITIONAL_JUMP;
            boolean taken = out && !inside.contains(insn.branchTarget().getAsLong());
            if (taken || out && !inside.contains(insn.nextAddress())) {
                if (taken && (label(d) == null || inverse(d.text().mnemonic()) == null)) return Reason.EXIT_IN_BODY;
                if (markers.size() == MAX_MARKERS || items.size() > 0xffff) return Reason.TOO_MANY_BLOCKS;
                markers.add(new Marker(d.index(), items.size(), false, true, taken));
                markerAt.add(p);
                continue;
            }
            List<Site> sites = probes.get(d.index());
            if (sites == null) continue;
            if (!always[p] && !anchored && marked != block) {
                if (markers.size() == MAX_MARKERS || items.size() > 0xffff) return Reason.TOO_MANY_BLOCKS;
                markers.add(new Marker(body.get(block).index(), items.size(), false, false, false));
                markerAt.add(block);
                marked = block;
            }
            int c = always[p] ? 0 : anchored ? OPTIONAL : markers.size();
            MemoryOperand m = c == OPTIONAL ? null : affine(d, sites, writers, induction);
            if (m == null) {
                onLoad |= dependsOnLoad(d, writers, body);
                boolean call = insn.flow() == Flow.CALL;
                for (Site s : sites) items.add(new Item(d.index(), s, false, NONE, NONE, 0, 0, c, 0, call));
                continue;
            }
            computed = true;
            int base = slot(slots, m.base());
            int index = slot(slots, m.index());
            int phase = 0;
            if (base != NONE && induction.containsKey(m.base().name()) && induction.get(m.base().name()).at() < p) phase |= 1;
            if (index != NONE && induction.containsKey(m.index().name()) && induction.get(m.index().name()).at() < p) phase |= 2;
            items.add(new Item(d.index(), sites.getFirst(), true, base, index, Math.max(1, m.scale()), phase, c,
                    m.displacement(), false));
        }
        if (!computed) return onLoad ? Reason.DEPENDS_ON_LOAD : Reason.NOT_AFFINE;
        // the trip count comes best from a constant step: a register step of 0 at run time leaves it unknown
        int trip = -1;
        for (int s = 0; s < slots.size() && trip < 0; s++) {
            Update u = induction.get(slots.get(s));
            if (u != null && u.register() == null) trip = s;
        }
        for (int s = 0; s < slots.size() && trip < 0; s++) if (induction.containsKey(slots.get(s))) trip = s;
        if (trip < 0) {
            String r = induction.keySet().iterator().next();
            for (var e : induction.entrySet()) if (e.getValue().register() == null) { r = e.getKey(); break; }
            trip = slot(slots, r);
        }
        int tripAt = induction.get(slots.get(trip)).at();
        for (int i = 0; i < markers.size(); i++) {
            Marker k = markers.get(i);
            // a block with a logged access keeps its marker: without it a wrong record would send the replay
            // searching through iterations for one where the block runs, with nothing to stop it
            int m = i + 1;
            boolean allComputed = items.stream().allMatch(it -> it.cond() != m || it.computed());
            Condition computedIf = k.exit() || !allComputed ? null : condition(body, always, markerAt.get(i), writers, induction, slots);
            markers.set(i, new Marker(k.instruction(), k.item(), tripAt < markerAt.get(i), k.exit(), k.taken(), computedIf));
        }
        // the registers that steps add come last: logged at entry like the others
        for (int s = 0; s < slots.size(); s++) {
            Update u = induction.get(slots.get(s));
            if (u != null && u.register() != null && !slots.contains(u.register())) slots.add(u.register());
        }
        int every = computedEveryIteration(items) + nested;
        if (searches(body, loop.exit(), writers, induction) && every <= slots.size()) return Reason.SHORT_SEARCH;
        if (loggedEveryIteration(items) >= every) return Reason.MOSTLY_LOGGED;
        long[] steps = new long[slots.size()];
        int[] stepSlots = new int[slots.size()];
        for (int s = 0; s < steps.length; s++) {
            Update u = induction.get(slots.get(s));
            steps[s] = u == null ? 0 : u.step();
            stepSlots[s] = u == null || u.register() == null ? NONE : slots.indexOf(u.register());
        }
        String header = loop.entryJump() < 0 ? label(loop.order().getLast()) : null;
        boolean tripBeforeExit = top && tripAt < loop.exit();
        // entered in the middle: the first iteration skips the updates before its start (the replay counts it as
        // iteration 0 of registers one step back); a run whose entry position holds no item starts at the next
        int entryMask = 0;
        for (int s = 0; s < slots.size(); s++) {
            Update u = induction.get(slots.get(s));
            if (u != null && u.at() < entryPos) entryMask |= 1 << s;
        }
        if (entryPos > 0 && slots.size() > 16) return Reason.TOO_MANY_BLOCKS;
        return new Loop(header, loop.entryInstruction(), loop.end().index(), loop.exitTaken(), loop.mayBeEmpty(), List.copyOf(slots), steps,
                stepSlots, trip, List.copyOf(items), List.copyOf(markers), exitItem, tripBeforeExit, loop.entryTaken(),
                entryItem, entryMask, List.of());
    }

    /** x86 condition codes (the low nibble of a jcc's opcode) by mnemonic: those a computed condition evaluates. */
    private static final Map<String, Integer> CONDITION_CODES = Map.ofEntries(Map.entry("jb", 2), Map.entry("jnae", 2),
            Map.entry("jc", 2), Map.entry("jae", 3), Map.entry("jnb", 3), Map.entry("jnc", 3), Map.entry("je", 4),
            Map.entry("jz", 4), Map.entry("jne", 5), Map.entry("jnz", 5), Map.entry("jbe", 6), Map.entry("jna", 6),
            Map.entry("ja", 7), Map.entry("jnbe", 7), Map.entry("js", 8), Map.entry("jns", 9), Map.entry("jl", 12),
            Map.entry("jnge", 12), Map.entry("jge", 13), Map.entry("jnl", 13), Map.entry("jle", 14), Map.entry("jng", 14),
            Map.entry("jg", 15), Map.entry("jnle", 15));

    /** Ifs a computed condition may nest: the jumps it evaluates for one block. */
    private static final int MAX_TERMS = SkeletonFormat.MAX_TERMS_WRITTEN;

    /**
     * The condition under which the conditional block starting at body position {@code block} runs, when the
     * replay can compute it; null when the block keeps its marker. Adds the registers it reads to {@code slots}
     * (logged at entry) only when it is computable.
     */
    private static Condition condition(List<FunctionPlanner.Decoded> body, boolean[] always, int block,
                                       Map<String, List<Integer>> writers, Map<String, Update> induction, List<String> slots) {
        List<String> trial = new ArrayList<>(slots);
        Condition c = term(body, always, block, writers, induction, trial, 1);
        if (c != null) {
            slots.clear();
            slots.addAll(trial);
        }
        return c;
    }

    /**
     * The block must have exactly one way in: one edge of a conditional jump (not the loop's own jump, not a
     * side exit), so it runs exactly when that jump goes its way and the jump's block runs. The jump's flags
     * must come from a {@code cmp} or {@code test} of its own block (the last flag writer before it) whose
     * operands are registers the body never writes or induction registers (any width: the low bytes are
     * compared) and immediates the text spells as numbers. When the jump's block runs every iteration that is
     * the whole condition; else the jump's block must have a computable condition itself (a block under
     * {@code if (a && b)}, or under two nested ifs), which this one's term is and-ed with, up to
     * {@link #MAX_TERMS} jumps.
     */
    private static Condition term(List<FunctionPlanner.Decoded> body, boolean[] always, int block, Map<String, List<Integer>> writers,
                                  Map<String, Update> induction, List<String> slots, int terms) {
        long start = body.get(block).instruction().address();
        int from = -1;
        boolean whenTaken = false;
        for (int p = 0; p < body.size(); p++) {
            Instruction i = body.get(p).instruction();
            boolean jumps = i.flow() != Flow.CALL && i.branchTarget().isPresent() && i.branchTarget().getAsLong() == start;
            boolean falls = p == block - 1 && i.flow() != Flow.JUMP && i.nextAddress() == start;
            if (!jumps && !falls) continue;
            if (from >= 0 || jumps && falls) return null; // a second way in
            from = p;
            whenTaken = jumps;
        }
        if (from < 0 || body.get(from).instruction().flow() != Flow.CONDITIONAL_JUMP || from == body.size() - 1) return null;
        Instruction jump = body.get(from).instruction();
        long other = whenTaken ? jump.nextAddress() : jump.branchTarget().getAsLong();
        if (body.stream().noneMatch(x -> x.instruction().address() == other)) return null; // a side exit's
        Integer cc = CONDITION_CODES.get(body.get(from).text().mnemonic());
        if (cc == null) return null;
        int setter = -1, fromBlock = from;
        while (!blockStart(body, fromBlock)) fromBlock--;
        for (int p = from - 1; p >= fromBlock && setter < 0; p--) if (writes(body.get(p).instruction(), FLAGS)) setter = p;
        if (setter < 0) return null; // the flags come from another block
        Condition outer = null;
        if (!always[from]) {
            if (terms == MAX_TERMS) return null;
            outer = term(body, always, fromBlock, writers, induction, slots, terms + 1);
            if (outer == null) return null;
        }
        FunctionPlanner.Decoded d = body.get(setter);
        Instruction insn = d.instruction();
        int op = switch (insn.mnemonic()) {
            case "cmp" -> Condition.CMP;
            case "test" -> Condition.TEST;
            default -> 0;
        };
        // test's short form (test $1, %al) names %al implicitly; the flags are hidden
        List<Operand> ops = insn.operands().stream().filter(o -> o.visibility() != Operand.Visibility.HIDDEN).toList();
        List<String> text = d.text().operands();
        if (op == 0 || ops.size() != 2 || text.size() != 2 || !insn.accesses().isEmpty()) return null;
        int width = 0;
        int[] slot = {NONE, NONE};
        long[] imm = new long[2];
        int phase = 0;
        for (int o = 0; o < 2; o++) {
            String spelled = text.get(1 - o).strip(); // the text is AT&T's: source first
            if (ops.get(o) instanceof RegisterOperand r) {
                String whole = r.register().enclosing().name();
                if (!whole.matches("r[a-z0-9]+") || whole.equals("rip") || writers.containsKey(whole) && !induction.containsKey(whole))
                    return null;
                width = r.register().widthBits() / 8;
                slot[o] = slot(slots, whole);
                Update u = induction.get(whole);
                if (u != null && u.at() < setter) phase |= 1 << o;
            } else if (ops.get(o) instanceof ImmediateOperand && spelled.startsWith("$") && number(spelled.substring(1)) != null) {
                imm[o] = number(spelled.substring(1));
            } else {
                return null;
            }
        }
        if (width == 0) return null;
        return new Condition(op, width, cc, whenTaken, slot[0], slot[1], imm[0], imm[1], phase, outer);
    }

    /**
     * Whether the back edge's condition depends on data the body loads (a search: {@code while (a[i] > v)}),
     * rather than on induction and invariant registers alone (a counted loop). A search's trip count is the
     * data's: often a few iterations, too few for the entry and exit records to cost less than the strided
     * records of full mode, which the codec packs to almost nothing.
     */
    private static boolean searches(List<FunctionPlanner.Decoded> body, int exit, Map<String, List<Integer>> writers,
                                    Map<String, Update> induction) {
        for (int p = exit - 1; p >= 0; p--) {
            Instruction insn = body.get(p).instruction();
            if (insn.registersWritten().stream().noneMatch(r -> r.name().equals(FLAGS))) continue;
            if (!insn.accesses().isEmpty()) return true;
            for (Operand o : insn.operands()) {
                if (!(o instanceof RegisterOperand r) || !r.read() || r.register().isNone()) continue;
                String name = r.register().enclosing().name();
                if (!name.equals(FLAGS) && writers.containsKey(name) && !induction.containsKey(name)) return true;
            }
            return false;
        }
        return true;
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
    private static boolean dearer(List<FunctionPlanner.Decoded> code, Candidate c, Loop loop) {
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
    private static long constantTrips(List<FunctionPlanner.Decoded> code, Candidate c, Loop loop) {
        List<FunctionPlanner.Decoded> body = c.order();
        if (c.entryJump() >= 0 || c.mayBeEmpty() || c.exitTaken() || c.exit() != body.size() - 1) return 0;
        String jcc = c.end().text().mnemonic();
        int trip = loop.tripSlot();
        long step = loop.steps()[trip];
        if (!jcc.equals("jne") && !jcc.equals("jnz") || loop.stepSlots()[trip] != NONE || step == 0) return 0;
        String r = loop.registers().get(trip);
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
                        || !reg.register().enclosing().name().equals(r)) continue;
                width = reg.register().widthBits();
                Operand other = t.instruction().operands().get(1 - o);
                String text = t.text().operands().size() == 2 ? t.text().operands().get(o).strip() : "";
                if (other instanceof ImmediateOperand && text.startsWith("$")) bound = number(text.substring(1));
                else if (other instanceof RegisterOperand s && s.register().widthBits() == width
                        && body.stream().noneMatch(d -> writes(d.instruction(), s.register().enclosing().name())))
                    bound = constantAtEntry(code, c.first(), s.register().enclosing().name());
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
    private static Long constantAtEntry(List<FunctionPlanner.Decoded> code, int first, String r) {
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

    /** The addresses {@code code}'s jumps and conditional jumps go to (not its calls'). */
    private static Set<Long> jumpTargets(List<FunctionPlanner.Decoded> code) {
        var targets = new HashSet<Long>();
        for (FunctionPlanner.Decoded d : code) {
            Instruction i = d.instruction();
            if (i.flow() != Flow.CALL && i.branchTarget().isPresent()) targets.add(i.branchTarget().getAsLong());
        }
        return targets;
    }

    private static boolean writes(Instruction i, String register) {
        for (Register w : i.registersWritten()) if (w.name().equals(register) || w.enclosing().name().equals(register)) return true;
        return false;
    }

    /** The accesses the replay computes in every iteration: each saves one record per iteration. */
    private static int computedEveryIteration(List<Item> items) {
        int n = 0;
        for (Item i : items) if (i.computed() && i.cond() == 0) n++;
        return n;
    }

    /**
     * The sites logged in every iteration. When they are as many as the computed accesses the loop saves
     * little: the records it drops are strided ones the codec packs to almost nothing, and without them the
     * logged ones were measured to pack worse (bench/programs/chase.c's shuffle, two loads and stores of
     * which one each is computed: the trace 0.13 % larger than full mode's).
     */
    private static int loggedEveryIteration(List<Item> items) {
        int n = 0;
        for (Item i : items) if (!i.computed() && i.cond() == 0) n++;
        return n;
    }

    /** Whether body position p starts a basic block: a jump target or the instruction after a jump. */
    private static boolean blockStart(List<FunctionPlanner.Decoded> body, int p) {
        if (p == 0) return true;
        if (body.get(p - 1).instruction().flow() != Flow.SEQUENTIAL) return true;
        long a = body.get(p).instruction().address();
        for (FunctionPlanner.Decoded d : body) {
            Instruction i = d.instruction();
            if (i.flow() != Flow.CALL && i.branchTarget().isPresent() && i.branchTarget().getAsLong() == a) return true;
        }
        return false;
    }

    private static int slot(List<String> slots, Register r) {
        return r.isNone() ? NONE : slot(slots, r.name());
    }

    private static int slot(List<String> slots, String r) {
        int i = slots.indexOf(r);
        if (i >= 0) return i;
        slots.add(r);
        return slots.size() - 1;
    }

    /**
     * The instruction's one explicit access when the replay can compute it: one site, a plain load, store or
     * modify, no segment base, no RIP, a numeric displacement as the text wrote it, and 64-bit registers
     * that the body leaves alone or steps.
     */
    private static MemoryOperand affine(FunctionPlanner.Decoded d, List<Site> sites, Map<String, List<Integer>> writers,
                                        Map<String, Update> induction) {
        List<MemoryAccess> accesses = d.instruction().accesses();
        if (sites.size() != 1 || accesses.size() != 1) return null;
        Site site = sites.getFirst();
        if (site.kind() < SiteFormat.LOAD || site.kind() > SiteFormat.MODIFY || site.fs()) return null;
        MemoryOperand m = accesses.getFirst().operand();
        if (m.visibility() != Operand.Visibility.EXPLICIT || m.segment().isSegmentWithBase()) return null;
        for (Register r : List.of(m.base(), m.index())) {
            if (r.isNone()) continue;
            if (r.isInstructionPointer() || r.widthBits() != 64) return null;
            if (writers.containsKey(r.name()) && !induction.containsKey(r.name())) return null;
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

    private static Long number(String s) {
        try {
            String t = s.toLowerCase(Locale.ROOT);
            boolean negative = t.startsWith("-");
            if (negative) t = t.substring(1);
            long v = t.startsWith("0x") ? Long.parseUnsignedLong(t.substring(2), 16) : Long.parseLong(t);
            return negative ? -v : v;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** Whether a register the access's address uses is written in the body by an instruction that reads memory. */
    private static boolean dependsOnLoad(FunctionPlanner.Decoded d, Map<String, List<Integer>> writers,
                                         List<FunctionPlanner.Decoded> body) {
        for (MemoryAccess a : d.instruction().accesses()) {
            for (Register r : List.of(a.operand().base(), a.operand().index())) {
                if (r.isNone()) continue;
                for (int w : writers.getOrDefault(r.enclosing().name(), List.of())) {
                    if (!body.get(w).instruction().accesses().isEmpty()) return true;
                }
            }
        }
        return false;
    }

    /**
     * The update of the 64-bit register {@code r} by {@code d}: a constant added (add, sub, inc, dec, lea) or
     * a register the body never writes ({@code add %reg, %r}); null when it is no such update.
     */
    private static Update update(FunctionPlanner.Decoded d, String r, int at, Map<String, List<Integer>> writers) {
        List<Operand> ops = d.instruction().operands();
        if (d.instruction().mnemonic().equals("add") && ops.size() >= 2 && ops.get(0) instanceof RegisterOperand dst
                && ops.get(1) instanceof RegisterOperand src && dst.register().name().equals(r)
                && dst.register().widthBits() == 64 && src.register().widthBits() == 64
                && src.visibility() == Operand.Visibility.EXPLICIT && !src.register().name().equals(r)
                && !writers.containsKey(src.register().name())) {
            return new Update(at, 0, src.register().name());
        }
        Long step = step(d, r);
        return step == null ? null : new Update(at, step, null);
    }

    /** The constant {@code insn} adds to the 64-bit register {@code r}; null when it is no such update. */
    private static Long step(FunctionPlanner.Decoded d, String r) {
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
        if (!dst.register().name().equals(r) || dst.register().widthBits() != 64) return null;
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
                if (!m.base().name().equals(r) || !m.index().isNone() || m.segment().isSegmentWithBase()) return null;
                return m.displacement();
            }
            default -> {
                return null;
            }
        }
    }

    /**
     * An outer loop (issue 10): a body of straight code and of inner skeleton loops ({@code accepted}, inner ones
     * first) that run in every iteration, each computed whole (no logged access, no marker, no call) and
     * entered with registers whose values are affine in the outer loop's registers, its trip register ending
     * at a value computable the same way (left by {@code jne}/{@code je} on a compare with a constant or a
     * register it leaves alone). Then the outer loop gets the entry and exit records and the inner loops none:
     * the replay runs them at their place in each iteration (docs/compiled-in.md, "Loop nests"). Otherwise the
     * reason: 10 while the body holds another loop or an inner loop with records of its own, 20 or 21 when the
     * inner loop's entry values or its trip count are not computable.
     */
    private static Object nest(List<FunctionPlanner.Decoded> code, Candidate c, Map<Instruction, Integer> at, FunctionModel model,
                               Map<Integer, List<Site>> probes, Map<Loop, Candidate> accepted) {
        if (c.entryAt() >= 0 || c.entryTaken()) return Reason.INNER_LOOP;
        List<FunctionPlanner.Decoded> body = c.order();
        Map<Long, Integer> position = positions(body);
        var inside = new ArrayList<Loop>();
        for (var e : accepted.entrySet())
            if (e.getValue().order().stream().allMatch(d -> position.containsKey(d.instruction().address()))) inside.add(e.getKey());
        Map<Integer, Loop> startsAt = new HashMap<>();
        var innerCode = new BitSet();
        for (Loop l : inside) {
            List<FunctionPlanner.Decoded> order = accepted.get(l).order();
            if (inside.stream().anyMatch(o -> o != l && accepted.get(o).order().containsAll(order))) continue; // a grandchild
            int first = position.get(order.getFirst().instruction().address());
            for (int j = 0; j < order.size(); j++)
                if (position.get(order.get(j).instruction().address()) != first + j) return Reason.INNER_LOOP;
            if (!l.markers().isEmpty() || l.entryTaken() || l.entryItem() != 0 || l.entryMask() != 0) return Reason.INNER_LOOP;
            for (Item it : l.items()) if (!it.computed() || it.cond() != 0) return Reason.INNER_LOOP;
            startsAt.put(first, l);
        }
        Set<Long> innerAddresses = new HashSet<>();
        for (Loop l : inside) for (FunctionPlanner.Decoded d : accepted.get(l).order()) innerAddresses.add(d.instruction().address());
        for (int i = 0; i < code.size(); i++) if (innerAddresses.contains(code.get(i).instruction().address())) innerCode.set(i);
        Reason shape = shape(code, c, at, innerCode);
        if (shape != null || startsAt.isEmpty()) return shape != null ? shape : Reason.INNER_LOOP;
        boolean[] always = always(c, model);
        for (int p = 0; p < body.size(); p++)
            if (!always[p] || body.get(p).instruction().flow() == Flow.CALL) return Reason.INNER_LOOP;

        Map<String, List<Integer>> writers = new HashMap<>();
        for (int p = 0; p < body.size(); p++)
            for (Register r : body.get(p).instruction().registersWritten()) {
                writers.computeIfAbsent(r.name(), k -> new ArrayList<>()).add(p);
                if (!r.enclosing().name().equals(r.name())) writers.computeIfAbsent(r.enclosing().name(), k -> new ArrayList<>()).add(p);
            }
        Map<String, Update> induction = new LinkedHashMap<>();
        writers.forEach((r, w) -> {
            if (w.size() != 1) return;
            Update u = update(body.get(w.getFirst()), r, w.getFirst(), writers);
            if (u != null && (u.step() != 0 || u.register() != null)) induction.put(r, u);
        });
        induction.putAll(carried(body, startsAt, accepted, writers, induction));
        var nests = new ArrayList<Nest>(); // item: the body position for now
        Reason walked = walk(body, startsAt, accepted, new Interpreter(writers, induction), nests);
        if (walked != null) return walked;
        int nested = 0;
        for (Nest n : nests) nested += n.inner().positions();
        Object r = analyze(c, always, probes, nested);
        if (!(r instanceof Loop o)) return r;
        if (!o.markers().isEmpty()) return Reason.INNER_LOOP;
        var slots = new ArrayList<>(o.registers());
        var steps = new ArrayList<Long>();
        for (long v : o.steps()) steps.add(v);
        var stepSlots = new ArrayList<Integer>();
        for (int v : o.stepSlots()) stepSlots.add(v);
        var stepRegister = new HashMap<Integer, String>();
        for (Nest n : nests)
            for (Affine a : values(n))
                for (String reg : a.terms().keySet()) {
                    if (slots.contains(reg)) continue;
                    Update u = induction.get(reg);
                    slots.add(reg);
                    steps.add(u == null ? 0 : u.step());
                    stepSlots.add(NONE);
                    if (u != null && u.register() != null) stepRegister.put(slots.size() - 1, u.register());
                }
        for (var e : stepRegister.entrySet()) {
            if (!slots.contains(e.getValue())) {
                slots.add(e.getValue());
                steps.add(0L);
                stepSlots.add(NONE);
            }
            stepSlots.set(e.getKey(), slots.indexOf(e.getValue()));
        }
        if (slots.size() > 32) return Reason.TOO_MANY_BLOCKS;
        // the combined order: an inner loop's run comes before the outer loop's items at later body positions
        Map<Integer, Integer> byIndex = new HashMap<>();
        for (int p = 0; p < body.size(); p++) byIndex.put(body.get(p).index(), p);
        var placed = new ArrayList<Nest>();
        for (int i = 0; i < nests.size(); i++) {
            Nest n = nests.get(i);
            int before = 0;
            for (Item it : o.items()) if (byIndex.get(it.instruction()) < n.item()) before++;
            placed.add(new Nest(before + i, n.inner(), n.entry(), n.exit()));
        }
        int exitItem = o.exitItem();
        if (exitItem > 0 || o.tripBeforeExit()) for (Nest n : nests) if (n.item() < c.exit()) exitItem++;
        return new Loop(o.header(), o.entryJump(), o.backEdge(), o.exitTaken(), o.mayBeEmpty(), List.copyOf(slots),
                steps.stream().mapToLong(Long::longValue).toArray(), stepSlots.stream().mapToInt(Integer::intValue).toArray(),
                o.tripSlot(), o.items(), o.markers(), exitItem, o.tripBeforeExit(), false, 0, 0, List.copyOf(placed));
    }

    /**
     * One outer iteration followed through its straight code and its inner loops ({@code startsAt}, by body
     * position): each inner loop's entry values and final trip value as a {@link Nest} (its item the body position);
     * the reason when one is not computable.
     */
    private static Reason walk(List<FunctionPlanner.Decoded> body, Map<Integer, Loop> startsAt, Map<Loop, Candidate> accepted,
                               Interpreter state, List<Nest> nests) {
        Reason reason = null;
        for (int p = 0; p < body.size(); ) {
            Loop l = startsAt.get(p);
            if (l == null) {
                state.run(body.get(p++));
                continue;
            }
            Candidate ic = accepted.get(l);
            var entry = new ArrayList<Affine>();
            for (String r : l.registers()) entry.add(state.value(r));
            Trip trip = finalTrip(ic, l, state);
            if (entry.contains(null)) reason = reason == null ? Reason.NEST_ENTRY : reason;
            else if (trip == null) reason = reason == null ? Reason.NEST_TRIP : reason;
            else nests.add(new Nest(p, trip.slot() == l.tripSlot() ? l : counted(l, trip.slot()), List.copyOf(entry), trip.value()));
            for (FunctionPlanner.Decoded d : ic.order()) state.kill(d.instruction());
            if (trip != null) state.set(l.registers().get(trip.slot()), trip.value()); // left when it equals the value compared
            p += ic.order().size();
        }
        return reason;
    }

    /**
     * Registers the outer iteration as a whole steps by a constant (or an invariant register) other than by one
     * update: through copies, and through an inner loop that leaves its trip register at a bound (gcc's matrix
     * multiply at -O2 sets the next inner bound from the last: {@code leaq 16(%rax), %rcx} after the inner loop
     * left %rax equal to %rcx). Each is assumed to hold its start value plus iterations times a step, the
     * iteration followed once, and the assumption kept for those that end at their start value plus a constant or
     * an invariant; the others are dropped and the rest followed again, until none is dropped.
     */
    private static Map<String, Update> carried(List<FunctionPlanner.Decoded> body, Map<Integer, Loop> startsAt,
                                               Map<Loop, Candidate> accepted, Map<String, List<Integer>> writers,
                                               Map<String, Update> induction) {
        Set<String> stepped = new HashSet<>();
        for (FunctionPlanner.Decoded d : body)
            for (Register r : d.instruction().registersWritten()) {
                Register e = r.enclosing();
                if (e.widthBits() == 64 && !e.name().equals(FLAGS) && !e.isInstructionPointer() && !induction.containsKey(e.name()))
                    stepped.add(e.name());
            }
        Map<String, Update> carried = new HashMap<>();
        while (!stepped.isEmpty()) {
            Map<String, Update> known = new HashMap<>(induction);
            for (String r : stepped) known.put(r, new Update(-1, 0, null));
            Interpreter state = new Interpreter(writers, known);
            walk(body, startsAt, accepted, state, new ArrayList<>());
            carried.clear();
            Set<String> dropped = new HashSet<>();
            for (String r : stepped) {
                Affine end = state.value(r);
                Affine step = end == null ? null : end.plus(Affine.register(r).times(-1));
                String by = step == null || step.terms().size() != 1 ? null : step.terms().keySet().iterator().next();
                if (step != null && step.terms().isEmpty()) carried.put(r, new Update(-1, step.constant(), null));
                else if (by != null && step.constant() == 0 && step.terms().get(by) == 1 && !writers.containsKey(by))
                    carried.put(r, new Update(-1, 0, by));
                else dropped.add(r);
            }
            if (dropped.isEmpty()) break;
            stepped.removeAll(dropped);
            carried.clear();
        }
        return carried;
    }

    /** The loop with its trips counted by slot {@code trip} (a nested loop: no probe logs it, no marker reads it). */
    private static Loop counted(Loop l, int trip) {
        return new Loop(l.header(), l.entryJump(), l.backEdge(), l.exitTaken(), l.mayBeEmpty(), l.registers(), l.steps(), l.stepSlots(),
                trip, l.items(), l.markers(), l.exitItem(), l.tripBeforeExit(), l.entryTaken(), l.entryItem(), l.entryMask(), l.nests());
    }

    /** The nest's computed values: the inner loop's entry values, slot by slot, then its trip register's final value. */
    static List<Affine> values(Nest n) {
        var all = new ArrayList<>(n.entry());
        all.add(n.exit());
        return all;
    }

    /**
     * The value the inner loop's trip register has when the loop is left: what its exit compares it with, when the
     * exit is taken on equality ({@code jne} back, {@code je} out) and nothing writes the register between the
     * compare and the jump; a compare with 0 when the flags come from its own update or a {@code test} of it.
     * Null when it is not known from the outer loop's registers.
     */
    private static Trip finalTrip(Candidate ic, Loop l, Interpreter state) {
        String jcc = ic.end().text().mnemonic();
        boolean equal = ic.exitTaken() ? jcc.equals("je") || jcc.equals("jz") : jcc.equals("jne") || jcc.equals("jnz");
        if (!equal) return null;
        // the trip register first; else another slot stepped by a constant, which then counts the trips
        var slots = new ArrayList<Integer>(List.of(l.tripSlot()));
        for (int s = 0; s < l.registers().size(); s++) if (s != l.tripSlot()) slots.add(s);
        for (int s : slots) {
            // another slot only where the record's shape does not depend on which one counts (no test below code)
            if (s != l.tripSlot() && (l.stepSlots()[s] != NONE || l.steps()[s] == 0 || l.testedBelowTop())) continue;
            if (l.stepSlots()[s] != NONE && l.steps()[s] == 0) continue;
            Affine v = finalValue(ic, l.registers().get(s), state);
            if (v != null) return new Trip(s, v);
        }
        return null;
    }

    /** The slot whose final value an inner loop's run is counted by, and that value. */
    private record Trip(int slot, Affine value) {
    }

    private static Affine finalValue(Candidate ic, String t, Interpreter state) {
        List<FunctionPlanner.Decoded> body = ic.order();
        int test = -1;
        for (int p = ic.exit() - 1; p >= 0 && test < 0; p--) if (writes(body.get(p).instruction(), FLAGS)) test = p;
        if (test < 0 || !spelled(body.get(test))) return null;
        for (int p = test + 1; p < ic.exit(); p++) if (writes(body.get(p).instruction(), t)) return null;
        Instruction x = body.get(test).instruction();
        List<Operand> ops = x.operands();
        switch (x.mnemonic()) {
            case "cmp" -> {
                if (ops.size() < 2) return null; // and the flags, implicit
                for (int o = 0; o < 2; o++) {
                    if (!(ops.get(o) instanceof RegisterOperand reg) || !reg.register().name().equals(t)) continue;
                    Operand other = ops.get(1 - o);
                    if (other instanceof ImmediateOperand imm) return Affine.of(imm.value());
                    if (other instanceof RegisterOperand y && y.register().widthBits() == 64 && !y.register().isInstructionPointer()
                            && body.stream().noneMatch(d -> writes(d.instruction(), y.register().name())))
                        return state.value(y.register().name());
                }
                return null;
            }
            case "test" -> {
                return ops.size() >= 2 && ops.subList(0, 2).stream().allMatch(o -> o instanceof RegisterOperand reg && reg.register().name().equals(t))
                        ? Affine.of(0) : null;
            }
            case "add", "sub", "inc", "dec" -> {
                return !ops.isEmpty() && ops.getFirst() instanceof RegisterOperand reg && reg.register().name().equals(t) ? Affine.of(0) : null;
            }
            default -> {
                return null;
            }
        }
    }

    /** Whether every immediate and displacement of the instruction is a number as its text spells it (no relocation). */
    private static boolean spelled(FunctionPlanner.Decoded d) {
        for (String o : d.text().operands()) {
            String t = o.strip();
            if (t.startsWith("$") ? number(t.substring(1)) == null
                    : !t.startsWith("%") && (t.indexOf('(') < 0 ? number(t) == null
                    : t.indexOf('(') > 0 && number(t.substring(0, t.indexOf('(')).strip()) == null)) return false;
        }
        return true;
    }

    /**
     * The registers of one outer iteration as affine values of the registers at its start, instruction by
     * instruction through its straight code: moves, {@code lea}, additions of constants and of registers, shifts
     * and zeroing; any other write leaves its register unknown. At the start a register is known when the body
     * never writes it (invariant) or only steps it once (induction: its value then is the entry value plus the
     * iterations times the step, which the replay counts).
     */
    private static final class Interpreter {
        private final Map<String, List<Integer>> writers;
        private final Map<String, Update> induction;
        private final Map<String, Affine> state = new HashMap<>();

        Interpreter(Map<String, List<Integer>> writers, Map<String, Update> induction) {
            this.writers = writers;
            this.induction = induction;
        }

        Affine value(String r) {
            if (state.containsKey(r)) return state.get(r);
            return !writers.containsKey(r) || induction.containsKey(r) ? Affine.register(r) : null;
        }

        void set(String r, Affine v) { state.put(r, v); }

        void kill(Instruction i) {
            for (Register w : i.registersWritten()) state.put(w.enclosing().name(), null);
        }

        void run(FunctionPlanner.Decoded d) {
            Instruction i = d.instruction();
            List<Operand> ops = i.operands();
            Affine result = null;
            String target = null;
            if (i.flow() == Flow.SEQUENTIAL && i.accesses().isEmpty() && spelled(d) && !ops.isEmpty()
                    && ops.getFirst() instanceof RegisterOperand ro && !ro.register().isNone()) {
                Register dst = ro.register();
                target = dst.enclosing().name();
                int w = dst.widthBits();
                Operand src = ops.size() > 1 ? ops.get(1) : null;
                result = switch (i.mnemonic()) {
                    case "mov", "movabs" -> w == 64 && src instanceof RegisterOperand s && s.register().widthBits() == 64
                            ? value(s.register().name())
                            : src instanceof ImmediateOperand imm && (w == 64 || w == 32 && imm.value() >= 0)
                            ? Affine.of(w == 32 ? imm.value() & 0xffffffffL : imm.value()) : null;
                    case "xor" -> src instanceof RegisterOperand s && s.register().equals(dst) && w >= 32 ? Affine.of(0) : null;
                    case "lea" -> w == 64 && src instanceof MemoryOperand m ? address(m) : null;
                    case "add", "sub" -> {
                        Affine a = w == 64 ? value(target) : null;
                        Affine b = src instanceof ImmediateOperand imm ? Affine.of(imm.value())
                                : src instanceof RegisterOperand s && s.register().widthBits() == 64 ? value(s.register().name()) : null;
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
                Affine b = value(m.base().name());
                if (b == null) return null;
                a = a.plus(b);
            }
            if (!m.index().isNone()) {
                if (m.index().widthBits() != 64) return null;
                Affine x = value(m.index().name());
                if (x == null) return null;
                a = a.plus(x.times(Math.max(1, m.scale())));
            }
            return a;
        }
    }
}
