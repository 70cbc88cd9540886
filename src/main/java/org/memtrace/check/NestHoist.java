package org.memtrace.check;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The ranges of an innermost loop hoisted further out, level by level, to the entry of the loops around it
 * (ASan--'s and Spindle's idea, on {@link PlainCover}'s unchecked bodies): gemm's
 * {@code c[i][j] += a[i][k] * b[k][j]} checked two ranges and one {@code a[i][k]} per row of C (262 144 times at
 * N = 512); now B and C are checked once per call and {@code a[i][k]}'s row once per {@code i}.
 *
 * <p>The outer loop: a label only its back edge names, entered by falling into it, whose body is straight-line
 * code around exactly one inner loop (no other label, jump or call). It is executed symbolically from its top;
 * at the inner loop, the inner loop's ranges (in the registers at its entry) are rewritten in the outer loop's
 * registers, and the inner loop's induction registers leave it at their exit values
 * ({@code r + (jl + 1) * step}, when the inner counter's stride divides theirs; opaque otherwise). An inner
 * range then moves by a constant per outer iteration, and its union over the outer loop's iterations is
 * {@code [lowest low, highest high)}, from the outer loop's first and last iterations (its exit read as
 * {@link LoopHoist}'s rule reads a loop's). The outer loop's own accesses ({@code a[i][k]}) get ranges as an
 * innermost loop's would. The result is again a loop's summary, so the loop around it can take it in turn.
 *
 * <p>A range moves only when the union is what the iterations touch: a constant extent (not access by access,
 * so a stride of at most 64 bytes) moving by at most its extent plus 64 bytes per outer iteration, so that it
 * spans no gap the loops skip; a column walk (tested access by access) moving along its rows by at most one
 * access, as rows of {@code T * move + size} bytes (matmul's {@code b[k][j]} over {@code j}); a range with a
 * shift at entry or rows only when nothing in them moves; the others stay at the inner loop's entry.
 * It assumes what {@link LoopHoist} assumes: loops entered by falling into them run at least once, and end by
 * reaching their exit value exactly.
 */
final class NestHoist {
    private NestHoist() {}

    /**
     * What moving one level out gives: the inner ranges that stay at the inner loop's entry (a division at entry,
     * a stride tested access by access, a union that would span a gap), and the outer loop's summary: the unions
     * of the others and the outer loop's own accesses, in its registers at its top, and how it ends.
     */
    record Level(List<LoopRanges.Range> atInner, LoopRanges.Summary up) {}

    /** The ranges of the loop at {@code outerTop} around the loop at {@code innerTop} (whose summary is inner), or null. */
    static Level of(int outerTop, int innerTop, LoopRanges.Summary inner, List<Integer> outerAccesses,
                    List<AsmLine> parsed, Map<String, Integer> definedAt, Map<String, Integer> references) {
        if (!(parsed.get(outerTop) instanceof AsmLine.Label outerLabel)) return null;
        String label = outerLabel.name();
        if (references.getOrDefault(label, 0) != 1 || !LoopHoist.fallsInto(parsed, outerTop)) return null;
        String innerLabel = ((AsmLine.Label) parsed.get(innerTop)).name();
        Symbolic s = new Symbolic(LoopHoist.narrowAtEntry(parsed, outerTop));
        Map<Integer, Linear> forms = new HashMap<>();
        List<LoopRanges.Range> moved = new ArrayList<>(), atInner = new ArrayList<>();
        Latch latch = new Latch();
        for (int i = outerTop + 1; i < parsed.size() && !latch.reached(); i++) {
            AsmLine l = parsed.get(i);
            if (i == innerTop) {
                Map<String, Linear> at = s.snapshot();
                for (LoopRanges.Range r : inner.ranges()) {
                    Linear first = substitute(r.first(), at), last = substitute(r.last(), at);
                    Linear count = r.count() == null ? null : substitute(r.count(), at);
                    Linear width = r.width() == null ? null : substitute(r.width(), at);
                    if (first == null || last == null || r.count() != null && count == null
                            || r.width() != null && width == null) atInner.add(r);
                    else moved.add(new LoopRanges.Range(first, last, count, r.shift(), r.mult(), r.size(), r.store(),
                            r.step(), r.line(), r.strided(), width));
                }
                int back = backEdge(parsed, innerTop, innerLabel);
                if (back < 0) return null;
                LoopRanges.Exit e = inner.exit();
                for (String r : Registers.ALL) {
                    Long c = e.steps().get(r);
                    if (c != null && c == 0) continue;
                    // r + (jl + 1) * c with jl = -(D0 + e) / dstep: linear when dstep divides c
                    Linear exitValue = c != null && c % e.dstep() == 0
                            ? substitute(Linear.register(r).minus(e.d().plus(e.e()).times(c / e.dstep())).plus(c), at)
                            : null;
                    s.assign(r, exitValue);
                }
                i = back;
                latch.forget();
                continue;
            }
            if (!(l instanceof AsmLine.Instruction in)) {
                if (l instanceof AsmLine.Label x && !x.name().startsWith(".LVL") && !x.name().startsWith(".LBB")
                        && !x.name().startsWith(".LBE")) return null;
                if (l instanceof AsmLine.Directive d && d.name().equals("#APP")) return null;
                continue;
            }
            if (outerAccesses.contains(i)) {
                Linear f = s.address(in.operands().get(MemoryOperands.memoryOperand(in)));
                if (f == null) return null;
                forms.put(i, f);
            }
            String m = in.mnemonic();
            if (m.startsWith("call") || m.startsWith("ret")) return null;
            if (!latch.take(s, in, label)) return null;
        }
        if (moved.isEmpty() || forms.size() != outerAccesses.size()) return null;
        LoopRanges.Exit exit = latch.exit(s);
        if (exit == null) return null;
        List<LoopRanges.Range> ranges = new ArrayList<>();
        for (LoopRanges.Range r : moved) {
            LoopRanges.Range u = union(r, exit);
            if (u != null) ranges.add(u);
            else atInner.add(unmoved(r, inner.ranges()));
        }
        if (ranges.isEmpty()) return null;
        List<LoopRanges.Range> own = LoopRanges.ranges(outerAccesses, forms, exit, parsed);
        if (own == null) return null;
        ranges.addAll(own);
        return new Level(atInner, new LoopRanges.Summary(ranges, exit));
    }

    /** The inner range a moved one came from (the same access line). */
    private static LoopRanges.Range unmoved(LoopRanges.Range r, List<LoopRanges.Range> inner) {
        for (LoopRanges.Range i : inner) if (i.line() == r.line() && i.store() == r.store() && i.size() == r.size()) return i;
        throw new IllegalStateException("no inner range for line " + r.line());
    }

    /** An inner range's union over the outer loop's iterations, or null when it would span a gap. */
    private static LoopRanges.Range union(LoopRanges.Range r, LoopRanges.Exit exit) {
        // the low end and the high end (less the access size) of the inner range in one outer iteration
        Linear low = r.step() >= 0 ? r.first() : r.last(), high = r.step() >= 0 ? r.last() : r.first();
        Long move = LoopHoist.step(low, exit.steps()), moveHigh = LoopHoist.step(high, exit.steps());
        if (move == null || moveHigh == null) return null;
        if (r.count() != null || r.width() != null) {
            // a shift at entry (matmul's row of A) or rows already widened: the same range every iteration, or
            // it stays below
            Long c = r.count() == null ? Long.valueOf(0) : LoopHoist.step(r.count(), exit.steps());
            Long w = r.width() == null ? Long.valueOf(0) : LoopHoist.step(r.width(), exit.steps());
            return move == 0 && moveHigh == 0 && c != null && c == 0 && w != null && w == 0 ? r : null;
        }
        if (move == 0 && moveHigh == 0) return r;             // the same range every iteration (B from k's loop)
        if (r.strided()) {
            // a column walk the outer loop moves along its rows by at most an access (matmul's b[k][j] over j):
            // each row's accesses over the outer iterations are one span, [row, row + T * move + size) (T the
            // outer loop's last iteration), checked row by row, as the runtime checks a stride
            if (!move.equals(moveHigh) || Math.abs(move) > r.size() || move % exit.dstep() != 0) return null;
            Linear travel = exit.d().plus(exit.e()).times(-(move / exit.dstep()));   // T * move
            return move > 0
                    ? new LoopRanges.Range(r.first(), r.last(), null, 0, 0, r.size(), r.store(), r.step(), r.line(), true,
                            travel.plus(Linear.constant(r.size())))
                    : new LoopRanges.Range(r.first().plus(travel), r.last().plus(travel), null, 0, 0, r.size(), r.store(),
                            r.step(), r.line(), true, Linear.constant(r.size()).minus(travel));
        }
        Linear extent = high.minus(low);
        if (!extent.terms().isEmpty() || extent.constant() < 0) return null;
        if (move % exit.dstep() != 0 || Math.abs(move) > extent.constant() + r.size() + 64) return null;
        Linear shift = exit.d().plus(exit.e()).times(move / exit.dstep());   // last iteration = first - shift
        Linear lowest = move >= 0 ? low : low.minus(shift), highest = move >= 0 ? high.minus(shift) : high;
        return new LoopRanges.Range(lowest, highest, null, 0, 0, r.size(), r.store(), r.step(), r.line(), false);
    }

    /** The inner loop's back edge: the first jump to its label after it. */
    private static int backEdge(List<AsmLine> parsed, int top, String label) {
        for (int i = top + 1; i < parsed.size(); i++) {
            if (parsed.get(i) instanceof AsmLine.Instruction in && in.isJump() && in.operands().equals(List.of(label))) return i;
        }
        return -1;
    }

    /** f with every register replaced by its value in {@code at}; null when f reads something else. */
    static Linear substitute(Linear f, Map<String, Linear> at) {
        Linear v = Linear.constant(f.constant());
        for (var t : f.terms().entrySet()) {
            Linear r = at.get(t.getKey());
            if (r == null) return null;
            v = v.plus(r.times(t.getValue()));
        }
        return v;
    }
}
