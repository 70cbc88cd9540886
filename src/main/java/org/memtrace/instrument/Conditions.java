package org.memtrace.instrument;

import static org.memtrace.instrument.AsmFacts.FLAGS;
import static org.memtrace.instrument.AsmFacts.blockStart;
import static org.memtrace.instrument.AsmFacts.number;
import static org.memtrace.instrument.AsmFacts.writes;
import static org.memtrace.instrument.Induction.slot;
import static org.memtrace.instrument.LoopSkeleton.NONE;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.memtrace.format.SkeletonFormat.Condition;
import org.memtrace.format.SkeletonFormat;
import org.memtrace.instrument.Induction.Update;
import org.memtrace.x86.Flow;
import org.memtrace.x86.ImmediateOperand;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.Operand;
import org.memtrace.x86.Register;
import org.memtrace.x86.RegisterOperand;

/**
 * A conditional block's condition, when the replay can compute it from the loop's registers: the compare and
 * jump that decide it, and-ed with those of the blocks around it (up to {@link SkeletonFormat#MAX_TERMS_WRITTEN}).
 */
final class Conditions {
    private Conditions() {
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
    static Condition condition(List<FunctionPlanner.Decoded> body, boolean[] always, int block,
                                       Map<Register, List<Integer>> writers, Map<Register, Update> induction, List<Register> slots) {
        List<Register> trial = new ArrayList<>(slots);
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
    static Condition term(List<FunctionPlanner.Decoded> body, boolean[] always, int block, Map<Register, List<Integer>> writers,
                                  Map<Register, Update> induction, List<Register> slots, int terms) {
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
                Register whole = r.register().enclosing();
                if (!whole.name().matches("r[a-z0-9]+") || whole.isInstructionPointer()
                        || writers.containsKey(whole) && !induction.containsKey(whole))
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
}
