package org.memtrace.rewrite;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import org.memtrace.x86.Flow;
import org.memtrace.x86.Instruction;

/**
 * Trampoline tails (docs/rewriting.md, "Trampoline tails"): a trampoline whose last part falls through goes
 * on to run copies of the instructions after it, up to and including the last one the int3 fallback took
 * within {@link #LIMIT} instructions and before the first control transfer but a conditional jump (a trapped
 * return, indirect jump or call ends it; a conditional jump's copy leaves for its target when taken), and
 * then jumps back after that one; or up to a conditional jump to a trapped instruction, whose copy goes straight
 * to that instruction's trampoline. The instructions copied keep their own bytes, jump or
 * int3, so a thread that arrives at one of them from elsewhere runs it as before; only falling through from
 * the patched instruction no longer traps. No control-flow knowledge is needed, unlike moving a run: the
 * copies run exactly what the originals would, in the same order, each probed as its own trampoline probes it.
 * The one place that must be right is where the tail goes back to: an instruction boundary whose bytes are
 * still an instruction, its jump or its int3, never the inside of a moved run.
 */
final class Tails {
    /** The most instructions a tail copies. */
    static final int LIMIT = 8;

    private Tails() {}

    /**
     * {@code decisions} with a tail on every patch and trapped instruction whose followers include a trapped
     * one that falling through reaches; {@code all} and {@code bytes} the module's instructions in address
     * order, {@code part} how one is copied (null: it cannot be).
     */
    static List<Decision> add(List<Decision> decisions, List<Instruction> all, List<byte[]> bytes,
                              BiFunction<Instruction, byte[], Decision.Part> part) {
        Map<Long, Integer> index = new HashMap<>();
        for (int i = 0; i < all.size(); i++) index.put(all.get(i).address(), i);
        Set<Long> trapped = new HashSet<>(), inside = new HashSet<>();
        for (Decision d : decisions) {
            switch (d) {
                case Decision.Trapped t -> trapped.add(t.instruction().address());
                case Decision.Patch p -> {
                    for (int k = 1; k < p.parts().size(); k++) inside.add(p.parts().get(k).instruction().address());
                }
                default -> { }
            }
        }
        if (trapped.isEmpty()) return decisions;
        List<Decision> out = new ArrayList<>(decisions.size());
        for (Decision d : decisions) {
            out.add(switch (d) {
                case Decision.Patch p -> p.withTail(tail(p, all, bytes, index, trapped, inside, part));
                case Decision.Trapped t -> new Decision.Trapped(t.patch().withTail(tail(t.patch(), all, bytes, index, trapped, inside, part)));
                default -> d;
            });
        }
        return out;
    }

    /** The copies after {@code p}, empty when none would save a trap. */
    private static List<Decision.Part> tail(Decision.Patch p, List<Instruction> all, List<byte[]> bytes, Map<Long, Integer> index,
                                            Set<Long> trapped, Set<Long> inside, BiFunction<Instruction, byte[], Decision.Part> part) {
        if (!fallsThrough(p.parts().getLast().instruction())) return List.of();
        Integer at = index.get(p.end());
        if (at == null) return List.of();
        List<Decision.Part> copies = new ArrayList<>();
        int keep = 0; // copies up to the last trapped one after which the tail may go back
        long expected = p.end();
        for (int j = at; j < all.size() && copies.size() < LIMIT; j++) {
            Instruction insn = all.get(j);
            if (insn.address() != expected) break; // a section's end
            Decision.Part copy = part.apply(insn, bytes.get(j));
            if (copy == null) break;
            copies.add(copy);
            expected = insn.nextAddress();
            boolean falls = fallsThrough(insn);
            // after a return, a jump or an emulated call nothing comes back here; else the tail goes back after
            // the copy, which must be an instruction whose bytes are there, not one a run moved
            if (trapped.contains(insn.address()) && (!falls || !inside.contains(expected))) keep = copies.size();
            // a conditional jump to a trapped instruction: its copy goes straight to that one's trampoline
            // (TrampolineWriter), where the original would trap (python3's `je` to a bare `ret`: 15,127 traps)
            if (insn.flow() == Flow.CONDITIONAL_JUMP && copy.move() == Decision.Move.BRANCH
                    && trapped.contains(insn.branchTarget().orElseThrow()) && !inside.contains(expected)) keep = copies.size();
            if (!falls) break;
        }
        return copies.subList(0, keep);
    }

    /**
     * Whether the tail may go on after {@code insn}: a sequential instruction, or a conditional jump (its copy
     * jumps to the original target when taken, so only the way it falls through continues in the tail:
     * CPython's switches, {@code cmpl $N,(%rbx); ja default; mov (%rbx),%eax; jmp *T(,%rax,8)}, trapped
     * the {@code mov} after the patched compare and branch).
     */
    private static boolean fallsThrough(Instruction insn) {
        return insn.flow() == Flow.SEQUENTIAL || insn.flow() == Flow.CONDITIONAL_JUMP;
    }
}
