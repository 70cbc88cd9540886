package org.memtrace.instrument;

import static org.memtrace.instrument.AsmFacts.FLAGS;
import static org.memtrace.instrument.AsmFacts.jumpTargets;
import static org.memtrace.instrument.AsmFacts.positions;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.memtrace.instrument.LoopSkeleton.Reason;
import org.memtrace.x86.Flow;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.Register;

/**
 * The loops' shapes (docs/compiled-in.md, "Skeleton loops"): the candidate loops gcc lays out (entered at a test
 * at the bottom, tested at the top, rotated with the latch first, entered in the middle), a candidate's body
 * reordered where gcc put a block of it elsewhere, and why a candidate is no loop the replay can follow.
 */
final class LoopShapes {
    private LoopShapes() {
    }

    /**
     * The loop whose back edge {@code last} jumps to {@code first}: entered by falling into {@code first}, or
     * (gcc's {@code jmp .Ltest} rotation, -O1 and -Os) by the jump right before it to a test at the bottom of
     * the body that only compares registers; then the first run may stop at the test.
     */
    static Candidate enteredAtTest(List<FunctionPlanner.Decoded> code, int first, int last) {
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
    static Candidate testedAtTop(List<FunctionPlanner.Decoded> code, int first, int last) {
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
    static Candidate reshaped(List<FunctionPlanner.Decoded> code, Candidate c) {
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
    static Candidate enteredMid(List<FunctionPlanner.Decoded> code, Candidate c, List<Candidate> candidates) {
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

    /**
     * Whether the code runs straight through, no jump and no call: the top of a loop tested at the top, which
     * runs once more in the iteration the run leaves at its test (a load of {@code while (p[i] >= 0)}, an
     * update of the counter before the test).
     */
    static boolean straight(List<FunctionPlanner.Decoded> code) {
        for (FunctionPlanner.Decoded d : code) if (d.instruction().flow() != Flow.SEQUENTIAL) return false;
        return true;
    }

    /** Whether the code reads no memory and writes no register but the flags: a loop test the entry may start with. */
    static boolean onlyCompares(List<FunctionPlanner.Decoded> code) {
        for (FunctionPlanner.Decoded d : code) {
            Instruction i = d.instruction();
            if (!i.accesses().isEmpty() || i.flow() != Flow.SEQUENTIAL) return false;
            for (Register r : i.registersWritten()) if (!r.equals(FLAGS)) return false;
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
    static Candidate rotated(List<FunctionPlanner.Decoded> code, int i) {
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
    static Reason shape(List<FunctionPlanner.Decoded> code, Candidate c, Map<Instruction, Integer> at) {
        return shape(code, c, at, new BitSet());
    }

    /** As above, passing the jumps of the code indices in {@code inner} (an outer loop's inner loops, checked by their own). */
    static Reason shape(List<FunctionPlanner.Decoded> code, Candidate c, Map<Instruction, Integer> at, BitSet inner) {
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
}
