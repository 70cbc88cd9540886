package org.memtrace.check;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Where an {@code if} inside a loop body makes code conditional, for {@link LoopHoist}. The body runs from the
 * loop's label to its back edge (the first jump to the label). Inside it, jumps may only go forward to labels
 * of the body that nothing outside it names (no side exit, no inner loop, no entry into the middle), and
 * there is no call but gcc's checks (a call may free what the loop reads), no return, no inline assembly; then
 * every iteration runs the <em>head</em> (the body up to its first jump or label) and the <em>tail</em> (after its
 * last label, where every path through the body joins: no jump can skip it, as a jump's target is a later
 * label of the body), and the lines between them run in some iterations only.
 *
 * @param firstBranch the head's end (the first internal jump or label), or -1 when the body is one block
 * @param lastJoin    the last internal label: the tail follows it
 * @param labels      the body's internal labels
 */
record LoopShape(int firstBranch, int lastJoin, Set<String> labels) {
    private static final Pattern JUMP_LABEL = Pattern.compile("\\.L\\d+");

    boolean conditional(int line) {
        return firstBranch >= 0 && line >= firstBranch && line < lastJoin;
    }

    boolean internal(String label) {
        return labels.contains(label);
    }

    /** The shape of the loop at {@code top}, or null when its body has a jump the rule cannot follow. */
    static LoopShape of(String label, int top, List<AsmLine> parsed, Map<String, Integer> definedAt,
                        Map<String, Integer> references) {
        Map<String, Integer> jumps = new HashMap<>();
        Set<String> labels = new HashSet<>();
        int first = -1, last = -1, back = -1;
        for (int i = top + 1; i < parsed.size() && back < 0; i++) {
            switch (parsed.get(i)) {
                case AsmLine.Label x -> {
                    if (!x.name().startsWith(".L")) return null;               // the function ended first
                    if (JUMP_LABEL.matcher(x.name()).matches()) {
                        labels.add(x.name());
                        if (first < 0) first = i;
                        last = i;
                    }
                }
                case AsmLine.Instruction in when in.isJump() -> {
                    if (in.operands().size() != 1) return null;
                    String target = in.operands().getFirst();
                    if (target.equals(label)) {
                        back = i;
                    } else {
                        Integer at = definedAt.get(target);
                        if (at == null || at <= i) return null;                // out of the function, or backward
                        jumps.merge(target, 1, Integer::sum);
                        if (first < 0) first = i;
                    }
                }
                case AsmLine.Instruction in -> {
                    // a call may free what the loop reads (checks aside); a return leaves from the middle
                    if (CheckCall.otherCall(in) || in.mnemonic().startsWith("ret")) return null;
                }
                case AsmLine.Directive d -> {
                    if (d.name().equals("#APP")) return null;                  // inline assembly jumps where it likes
                }
                default -> { }
            }
        }
        if (back < 0) return null;
        for (var j : jumps.entrySet()) {
            if (!labels.contains(j.getKey())) return null;                     // past the back edge: an exit
        }
        for (String l : labels) {
            // named only by the body's own jumps (not from outside, not by a jump table)
            if (!references.getOrDefault(l, 0).equals(jumps.getOrDefault(l, 0))) return null;
        }
        if (jumps.isEmpty()) return labels.isEmpty() ? new LoopShape(-1, -1, Set.of()) : null;
        return new LoopShape(first, last, Set.copyOf(labels));
    }
}
