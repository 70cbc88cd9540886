package org.memtrace.select;

import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.RegisterOperand;

import java.util.ArrayList;
import java.util.List;
import java.util.NavigableSet;
import java.util.OptionalLong;

/**
 * A function of a file built by {@code memtrace cc}, seen as the compiler wrote it, so the selection is
 * computed on the program's own instructions (docs/compiled-in.md, "The probe"). A probe that saves
 * registers is bracketed by {@code lea -128(%rsp),%rsp} and {@code lea 128(%rsp),%rsp} (or 136, or 144); a
 * bracket is taken for a probe only when a site of the file's table lies inside it, so program code of the
 * same shape stays. A probe in dead registers saves nothing: it runs from the {@code lea} at its first
 * site's address to its store of the cursor, {@code mov reg,%fs:disp}; in a loop that keeps its cursor in
 * a register, to its {@code lea 16n(C),C}, and the loop's entry and exit code (which hold no site) are left
 * out as well. The probe's bytes are
 * given to the program instruction before it (its length grows, so a block still starts after a branch) and
 * a jump into a probe lands on the instruction after it: blocks are those of the plain code. Static
 * operands are taken as places ({@link StaticPlaces}, resolved before the probes go), which the probes do
 * not move. What still differs from the plain file: addresses (the report gives the
 * instrumented file's, which objdump shows), alignment padding, and a jump the probes made longer.
 */
public final class ProbeCode {
    private static final int RED_ZONE = 128;
    /** The step of a group probe that saves two registers (an executable's object): 152 bytes below %rsp all the same. */
    private static final int LOCAL_STEP = 136;
    /** The step of a group probe that saves one register, the other one being dead. */
    private static final int ONE_SAVED_STEP = 144;

    private ProbeCode() {
    }

    /** {@code code} without its probes; {@code sites} are the file's probe sites, at the addresses of {@code code}. */
    public static List<Instruction> programInstructions(List<Instruction> code, NavigableSet<Long> sites) {
        boolean[] probe = new boolean[code.size()];
        var starts = new ArrayList<Long>();
        var ends = new ArrayList<Long>();
        for (int i = 0; i < code.size(); i++) {
            int loopCode = loopEntryOrExit(code, i);
            if (loopCode > 0) {
                for (int k = i; k < i + loopCode; k++) {
                    probe[k] = true;
                }
                starts.add(code.get(i).address());
                ends.add(code.get(i + loopCode - 1).nextAddress());
                i += loopCode - 1;
                continue;
            }
            long step = 0;
            for (long s : new long[] {RED_ZONE, LOCAL_STEP, ONE_SAVED_STEP}) {
                if (isStackLea(code.get(i), -s)) {
                    step = s;
                }
            }
            int j = i + 1;
            if (step != 0) {
                while (j < code.size() && !isStackLea(code.get(j), step)) {
                    j++;
                }
            } else if (sites.contains(code.get(i).address()) && code.get(i).mnemonic().equals("lea")) {
                while (j < code.size() && !isCursorStore(code.get(j)) && !isCursorBump(code.get(j))) {
                    j++;
                }
                if (j + 1 < code.size() && isCursorBump(code.get(j)) && isCursorStore(code.get(j + 1))) {
                    j++;
                }
            } else {
                continue;
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
        for (int i = 0; i < code.size(); i++) {
            Instruction insn = code.get(i);
            if (probe[i]) {
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
            result.add(new Instruction(insn.address(), Math.toIntExact(end - insn.address()), insn.mnemonic(), insn.operands(),
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

    /**
     * The entry or exit code of a loop that keeps its cursor in a register (docs/compiled-in.md, "A loop's
     * cursor"): {@code lea -128(%rsp),%rsp; push; push; mov %fs:disp,reg} or {@code mov reg,%fs:disp; pop;
     * pop; lea 128(%rsp),%rsp}; its instruction count, else 0. No site lies in it.
     */
    private static int loopEntryOrExit(List<Instruction> code, int i) {
        if (i + 3 >= code.size()) {
            return 0;
        }
        boolean entry = isStackLea(code.get(i), -RED_ZONE) && code.get(i + 1).mnemonic().equals("push")
                && code.get(i + 2).mnemonic().equals("push") && isCursorLoad(code.get(i + 3));
        boolean exit = isCursorStore(code.get(i)) && code.get(i + 1).mnemonic().equals("pop")
                && code.get(i + 2).mnemonic().equals("pop") && isStackLea(code.get(i + 3), RED_ZONE);
        return entry || exit ? 4 : 0;
    }

    /** {@code mov %fs:disp,reg}: a loop's entry loading the cursor. */
    private static boolean isCursorLoad(Instruction insn) {
        return insn.mnemonic().equals("mov") && insn.operands().size() >= 2
                && insn.operands().get(0) instanceof RegisterOperand
                && insn.operands().get(1) instanceof MemoryOperand m && m.read() && m.segment().name().equals("fs")
                && m.base().isNone() && m.index().isNone();
    }

    /**
     * {@code lea 16n(C),C}: how a probe advances its cursor; the last instruction of a probe inside a loop
     * that keeps its cursor in a register (a probe in dead registers stores it next).
     */
    private static boolean isCursorBump(Instruction insn) {
        return insn.mnemonic().equals("lea") && insn.operands().size() >= 2
                && insn.operands().get(0) instanceof RegisterOperand r
                && insn.operands().get(1) instanceof MemoryOperand m && m.index().isNone()
                && m.base().equals(r.register()) && m.displacement() > 0 && m.displacement() % 16 == 0;
    }

    /** {@code mov reg,%fs:disp}: how a probe in dead registers ends, storing the bumped cursor. */
    private static boolean isCursorStore(Instruction insn) {
        return insn.mnemonic().equals("mov") && insn.operands().size() >= 2
                && insn.operands().get(0) instanceof MemoryOperand m && m.write() && m.segment().name().equals("fs")
                && m.base().isNone() && m.index().isNone()
                && insn.operands().get(1) instanceof RegisterOperand;
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
}
