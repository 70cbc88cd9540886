package org.memtrace.instrument;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.memtrace.x86.Flow;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.Register;

/**
 * What the skeleton planner's pieces ask of gcc's assembly and its decoding: which jump inverts which, a jump's
 * {@code .L} label, where jumps go, which register an instruction writes, where a basic block starts, and the
 * numbers the text spells (a relocated immediate decodes as 0 in the object: only what the text spells is a
 * constant).
 */
final class AsmFacts {
    private AsmFacts() {
    }

    /**
     * The flags register. A constant read from Zydis's table: these classes run only on code the decoder has
     * read, so it is loaded by the time this class is.
     */
    static final Register FLAGS = Register.named("rflags");

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
    static String label(FunctionPlanner.Decoded jump) {
        List<String> operands = jump.text().operands();
        if (operands.size() != 1) return null;
        String l = operands.getFirst().strip();
        return l.startsWith(".L") && l.matches("[.A-Za-z0-9_$]+") ? l : null;
    }

    /** The addresses {@code code}'s jumps and conditional jumps go to (not its calls'). */
    static Set<Long> jumpTargets(List<FunctionPlanner.Decoded> code) {
        var targets = new HashSet<Long>();
        for (FunctionPlanner.Decoded d : code) {
            Instruction i = d.instruction();
            if (i.flow() != Flow.CALL && i.branchTarget().isPresent()) targets.add(i.branchTarget().getAsLong());
        }
        return targets;
    }

    /** Whether {@code i} writes {@code register} or a register that encloses it (%eax: %rax). */
    static boolean writes(Instruction i, Register register) {
        for (Register w : i.registersWritten()) if (w.equals(register) || w.enclosing().equals(register)) return true;
        return false;
    }

    /** Whether body position p starts a basic block: a jump target or the instruction after a jump. */
    static boolean blockStart(List<FunctionPlanner.Decoded> body, int p) {
        if (p == 0) return true;
        if (body.get(p - 1).instruction().flow() != Flow.SEQUENTIAL) return true;
        long a = body.get(p).instruction().address();
        for (FunctionPlanner.Decoded d : body) {
            Instruction i = d.instruction();
            if (i.flow() != Flow.CALL && i.branchTarget().isPresent() && i.branchTarget().getAsLong() == a) return true;
        }
        return false;
    }

    static Long number(String s) {
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

    /** Whether every immediate and displacement of the instruction is a number as its text spells it (no relocation). */
    static boolean spelled(FunctionPlanner.Decoded d) {
        for (String o : d.text().operands()) {
            String t = o.strip();
            if (t.startsWith("$") ? number(t.substring(1)) == null
                    : !t.startsWith("%") && (t.indexOf('(') < 0 ? number(t) == null
                    : t.indexOf('(') > 0 && number(t.substring(0, t.indexOf('(')).strip()) == null)) return false;
        }
        return true;
    }

    static Map<Long, Integer> positions(List<FunctionPlanner.Decoded> order) {
        Map<Long, Integer> position = new HashMap<>();
        for (int p = 0; p < order.size(); p++) position.put(order.get(p).instruction().address(), p);
        return position;
    }
}
