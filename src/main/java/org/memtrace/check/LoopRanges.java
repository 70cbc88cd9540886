package org.memtrace.check;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The range checks at an innermost loop's entry that cover its accesses ({@link PlainCover}): the loop's
 * accesses as affine forms of its induction registers, how it ends, and from both the bytes its iterations
 * touch, one range per stream of accesses.
 */
final class LoopRanges {
    private LoopRanges() {}

    /**
     * One range a loop's entry checks: from {@code first} to {@code last} (plus {@code (count >> shift) * mult}
     * when count is not null), accesses of {@code size} bytes moving by {@code step} (signed) per iteration;
     * strided: tested access by access. A strided range moved out of its loop ({@link NestHoist}) covers, at
     * each access, {@code width} bytes instead of {@code size} (null otherwise): the rows of a column walk that
     * the outer loop moves along them (matmul's {@code b[k][j]} over {@code j}).
     */
    record Range(Linear first, Linear last, Linear count, int shift, long mult, int size, boolean store, long step,
                 int line, boolean strided, Linear width) {
        Range(Linear first, Linear last, Linear count, int shift, long mult, int size, boolean store, long step,
              int line, boolean strided) {
            this(first, last, count, shift, mult, size, store, step, line, strided, null);
        }
    }

    /** How a loop ends: its invariant (0) and induction registers' steps, D = B - A at its compare, D's step, e. */
    record Exit(Map<String, Long> steps, Linear d, long dstep, long e) {}

    /** An innermost loop's ranges and how it ends. */
    record Summary(List<Range> ranges, Exit exit) {}

    /** The ranges of one innermost loop, or null when an access cannot be covered. */
    static Summary summarize(int top, List<Integer> accesses, List<AsmLine> parsed, Map<String, Integer> definedAt,
                             Map<String, Integer> references) {
        String label = ((AsmLine.Label) parsed.get(top)).name();
        if (references.getOrDefault(label, 0) != 1 || !LoopHoist.fallsInto(parsed, top)) return null;
        LoopShape shape = LoopShape.of(label, top, parsed, definedAt, references);
        if (shape == null) return null;
        Symbolic s = new Symbolic(LoopHoist.narrowAtEntry(parsed, top));
        Map<Integer, Linear> forms = new HashMap<>();
        Latch latch = new Latch();
        for (int i = top + 1; i < parsed.size() && !latch.reached(); i++) {
            if (!(parsed.get(i) instanceof AsmLine.Instruction in)) {
                if (parsed.get(i) instanceof AsmLine.Label x && !shape.internal(x.name()) && !x.name().startsWith(".LVL")
                        && !x.name().startsWith(".LBB") && !x.name().startsWith(".LBE")) return null;
                if (!shape.conditional(i)) continue;
                latch.forget();
                continue;
            }
            if (accesses.contains(i)) {
                if (shape.conditional(i)) return null;            // in some iterations only: no whole range
                Linear f = s.address(in.operands().get(MemoryOperands.memoryOperand(in)));
                if (f == null) return null;
                forms.put(i, f);
            }
            if (shape.conditional(i)) {
                Map<String, Linear> before = s.snapshot();
                s.step(in);
                s.forgetChanged(before);
                latch.forget();
                continue;
            }
            if (!latch.take(s, in, label)) return null;
        }
        if (forms.size() != accesses.size()) return null;
        Exit exit = latch.exit(s);
        if (exit == null) return null;
        List<Range> ranges = ranges(accesses, forms, exit, parsed);
        return ranges == null ? null : new Summary(ranges, exit);
    }

    /** How the loop whose symbolic state at its back edge is {@code s} ends, or null when that is not known. */
    static Exit exit(Symbolic s, Linear a, Linear b, String jump, boolean narrowCompare) {
        if (jump == null || a == null || b == null) return null;
        if (narrowCompare && !LoopHoist.CONTINUE_WHILE_NONZERO.contains(jump)) return null;
        Map<String, Long> steps = new HashMap<>();
        for (String r : Registers.ALL) {
            Linear end = s.get(r);
            if (end.terms().equals(Map.of(r, 1L))) steps.put(r, end.constant());
        }
        Linear d = b.minus(a);
        Long dstep = LoopHoist.step(d, steps);
        if (dstep == null || dstep == 0) return null;
        long e;
        if (LoopHoist.CONTINUE_WHILE_NONZERO.contains(jump)) e = 0;
        else if (LoopHoist.LESS.contains(jump) && dstep == 1 || LoopHoist.GREATER.contains(jump) && dstep == -1) e = 0;
        else if (LoopHoist.LESS_EQUAL.contains(jump) && dstep == 1 || LoopHoist.GREATER_EQUAL.contains(jump) && dstep == -1) e = -dstep;
        else return null;
        return new Exit(steps, d, dstep, e);
    }

    /** The ranges of a loop's accesses (their addresses at its top in {@code forms}), or null. */
    static List<Range> ranges(List<Integer> accesses, Map<Integer, Linear> forms, Exit exit, List<AsmLine> parsed) {
        Linear d = exit.d();
        long dstep = exit.dstep(), e = exit.e();
        // streams from one base with one stride, less than a stride apart (c[j] read and written, a vector
        // loop's two halves), share one range: the first one's in program order, widened to all of theirs
        List<Stream> streams = new ArrayList<>();
        for (int line : accesses.stream().sorted().toList()) {
            AsmLine.Instruction in = (AsmLine.Instruction) parsed.get(line);
            Linear f = forms.get(line);
            Long step = LoopHoist.step(f, exit.steps());
            // a stride the counter's does not divide needs a division at entry: a shift, when the counter's
            // stride is a power of two and the loop ends on reaching its exit value exactly (jne)
            if (step == null || step % dstep != 0 && !(e == 0 && Long.bitCount(Math.abs(dstep)) == 1)) return null;
            int width = MemoryOperands.width(in);
            Stream near = null;
            for (Stream st : streams) {
                if (st.form.terms().equals(f.terms()) && st.step == step && f.constant() + width > st.high - Math.abs(step)
                        && f.constant() < st.low + Math.abs(step)) near = st;
            }
            if (near != null && Math.max(near.high, f.constant() + width) - Math.min(near.low, f.constant()) <= 255) {
                near.low = Math.min(near.low, f.constant());
                near.high = Math.max(near.high, f.constant() + width);
                continue;
            }
            streams.add(new Stream(line, f, step, width, MemoryOperands.store(in, in.operands().get(MemoryOperands.memoryOperand(in)))));
        }
        List<Range> out = new ArrayList<>();
        for (Stream st : streams) {
            // the range [low, high) of the first iteration to that of the last, reported in the first
            // access's size: first + size is the range's end on the side the loop moves away from
            Linear first = new Linear(st.form.terms(), st.low);
            boolean divides = st.step % dstep == 0;
            // not divisible: last = first + jl * step with jl = -(D0 + e) / dstep = (D0 + e) >> k * -sign(dstep)
            Linear last = divides ? first.minus(d.plus(e).times(st.step / dstep)) : first;
            Linear count = divides ? null : d.plus(e);
            int shift = Long.numberOfTrailingZeros(Math.abs(dstep));
            long mult = -Long.signum(dstep) * st.step;
            // (a stride over 64 bytes is tested access by access, [a, a + size): there the size is the whole span)
            boolean strided = Math.abs(st.step) > 64;
            long extra = strided ? 0 : st.high - st.low - st.width;
            if (st.step >= 0) last = last.plus(extra);
            else first = first.plus(extra);
            int size = strided ? (int) (st.high - st.low) : st.width;
            out.add(new Range(first, last, count, shift, mult, size, st.store, st.step, st.line, strided));
        }
        return out;
    }

    /** The code that checks the ranges, or null when a coefficient is too large. */
    static List<String> emit(List<Range> ranges, List<AsmLine> parsed) {
        List<String> entry = new ArrayList<>();
        for (Range r : ranges) {
            List<String> code = LoopHoist.entryCheck(r.first(), r.last(), r.count(), r.shift(), r.mult(), r.size(),
                    r.store(), Math.abs(r.step()), r.width(), parsed, r.line());
            if (code == null) return null;
            entry.addAll(code);
        }
        return entry;
    }

    /** One range checked at a loop's entry: bytes [low, high) from the base in the first iteration. */
    private static final class Stream {
        final int line;
        final Linear form;
        final long step;
        final boolean store;
        final int width;
        long low, high;

        Stream(int line, Linear form, long step, int width, boolean store) {
            this.line = line;
            this.form = form;
            this.step = step;
            this.store = store;
            this.width = width;
            this.low = form.constant();
            this.high = form.constant() + width;
        }
    }
}
