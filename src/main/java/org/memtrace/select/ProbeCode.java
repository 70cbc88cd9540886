package org.memtrace.select;

import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.Operand;
import org.memtrace.x86.RegisterOperand;

import java.util.ArrayList;
import java.util.List;
import java.util.NavigableSet;
import java.util.OptionalLong;

/**
 * A function of a file built by {@code memtrace cc}, seen as the compiler wrote it, so the selection is
 * computed on the program's own instructions (docs/compiled-in.md, "The probe"). Every probe is bracketed
 * by {@code lea -128(%rsp),%rsp} and {@code lea 128(%rsp),%rsp} (or -136 and 136); a bracket is taken for a probe only when a
 * site of the file's table lies inside it, so program code of the same shape stays. The probe's bytes are
 * given to the program instruction before it (its length grows, so a block still starts after a branch) and
 * a jump into a probe lands on the instruction after it: blocks are those of the plain code. In a
 * relocatable object, where RIP-relative operands are not relocated and so name a place near the
 * instruction, that place moves back by the probe bytes before it, so distances between such operands are
 * those of the plain object. What still differs from the plain file: addresses (the report gives the
 * instrumented file's, which objdump shows), alignment padding, and a jump the probes made longer.
 */
public final class ProbeCode {
    private static final int RED_ZONE = 128;
    /** The step of a group probe that saves two registers (an executable's object): 152 bytes below %rsp all the same. */
    private static final int LOCAL_STEP = 136;

    private ProbeCode() {
    }

    /** {@code code} without its probes; {@code sites} are the file's probe sites, at the addresses of {@code code}. */
    public static List<Instruction> programInstructions(List<Instruction> code, NavigableSet<Long> sites, boolean relocatable) {
        boolean[] probe = new boolean[code.size()];
        var starts = new ArrayList<Long>();
        var ends = new ArrayList<Long>();
        for (int i = 0; i < code.size(); i++) {
            long step = isStackLea(code.get(i), -RED_ZONE) ? RED_ZONE : isStackLea(code.get(i), -LOCAL_STEP) ? LOCAL_STEP : 0;
            if (step == 0) {
                continue;
            }
            int j = i + 1;
            while (j < code.size() && !isStackLea(code.get(j), step)) {
                j++;
            }
            if (j == code.size()) {
                break;
            }
            long start = code.get(i).address();
            long end = code.get(j).nextAddress();
            Long site = sites.ceiling(start);
            if (site != null && site < end) {
                for (int k = i; k <= j; k++) {
                    probe[k] = true;
                }
                starts.add(start);
                ends.add(end);
                i = j;
            }
        }
        if (starts.isEmpty()) {
            return code;
        }
        var result = new ArrayList<Instruction>(code.size());
        long probeBytes = 0;
        for (int i = 0; i < code.size(); i++) {
            Instruction insn = code.get(i);
            if (probe[i]) {
                probeBytes += insn.length();
                continue;
            }
            int next = i + 1;
            while (next < code.size() && probe[next]) {
                next++;
            }
            long end = next < code.size() ? code.get(next).address() : code.getLast().nextAddress();
            OptionalLong target = insn.branchTarget();
            if (target.isPresent()) {
                target = OptionalLong.of(afterProbes(target.getAsLong(), starts, ends));
            }
            List<Operand> operands = relocatable && probeBytes > 0 ? shifted(insn.operands(), probeBytes) : insn.operands();
            result.add(new Instruction(insn.address(), Math.toIntExact(end - insn.address()), insn.mnemonic(), operands,
                    insn.flow(), target, insn.rep(), insn.lock()));
        }
        return result;
    }

    /** {@code lea d(%rsp),%rsp}: how every probe opens (d = -128 or -136) and closes (d = 128 or 136). */
    private static boolean isStackLea(Instruction insn, long displacement) {
        if (!insn.mnemonic().equals("lea") || insn.operands().size() < 2) {
            return false;
        }
        return insn.operands().get(0) instanceof RegisterOperand r && r.register().isStackPointer()
                && insn.operands().get(1) instanceof MemoryOperand m && m.base().isStackPointer() && m.index().isNone()
                && m.displacement() == displacement;
    }

    /** A jump into a probe (to the label in front of it) goes on at the program instruction after it. */
    private static long afterProbes(long target, List<Long> starts, List<Long> ends) {
        for (int k = 0; k < starts.size(); k++) {
            if (target >= starts.get(k) && target < ends.get(k)) {
                target = ends.get(k);
            }
        }
        return target;
    }

    private static List<Operand> shifted(List<Operand> operands, long by) {
        var result = new ArrayList<Operand>(operands.size());
        for (Operand o : operands) {
            if (o instanceof MemoryOperand m && m.isRipRelative() && m.staticAddress().isPresent()) {
                o = new MemoryOperand(m.segment(), m.base(), m.index(), m.scale(), m.displacement(), m.sizeBytes(),
                        m.read(), m.write(), m.use(), m.visibility(), OptionalLong.of(m.staticAddress().getAsLong() - by));
            }
            result.add(o);
        }
        return result;
    }
}
