package org.memtrace.instrument;

import org.memtrace.x86.Flow;
import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.Operand;
import org.memtrace.x86.Register;
import org.memtrace.x86.RegisterOperand;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Loops whose probes keep the thread's cursor in a register from entry to exit (docs/compiled-in.md, "A
 * loop's cursor"). A group probe pays for its saves and, above all, for reading back the cursor it stored in
 * the previous iteration: the store and the load make a chain through memory that binds a small loop's
 * speed whatever the probe records (gemm: one site an iteration cost about as much as three). In a loop
 * that does not use two registers, they are saved once on entry; in the loop the probe only stores its
 * records and advances the register.
 *
 * <p>Only the simplest shape is taken: a label, straight-line code (no label in it but gcc's debug labels),
 * and a conditional jump back to that label, entered only by falling into the label (no other reference to
 * it), left only by falling through the jump; no instruction in it touches %rsp (the saves stay below it
 * throughout), the two registers or a segment base, and each of its probes is a group probe. gcc's
 * vectorized and scalar inner loops at -O2 mostly have this shape.
 */
final class CursorLoops {
    /**
     * A loop that keeps its cursor in a register.
     *
     * @param label   the label its back edge jumps to: the entry code goes right before it
     * @param last    the index of the back edge: the exit code follows it
     * @param groups  the first instructions of its probes' groups
     * @param cursor  the cursor's register (one of {@link ProbeGroups#SCRATCH}: the full-buffer handler decodes it)
     * @param address the register of each address and site in turn
     */
    record Loop(String label, int last, Set<Integer> groups, Register cursor, Register address) {
    }

    /** gcc's own labels that nothing jumps to: lexical blocks, variable locations, CFI. */
    private static final Pattern DEBUG_LABEL = Pattern.compile("\\.L(BB|BE|BI|VL|VU|FB|FE|CFI|LST|ASF)\\d+");

    private CursorLoops() {
    }

    /**
     * The loops of one function that can keep their cursor in a register.
     *
     * @param unnumbered instructions after code the rewriter does not number (inline assembly, directives)
     * @param labels     the labels right before each instruction, by instruction index
     * @param references how often each label is named anywhere in the file (jumps, tables, debug data)
     */
    static List<Loop> find(List<FunctionPlanner.Decoded> code, Map<Integer, ProbeGroups.Group> groups,
                           BitSet unnumbered, Map<Integer, List<String>> labels, Map<String, Integer> references) {
        var loops = new ArrayList<Loop>();
        for (int j = 0; j < code.size(); j++) {
            FunctionPlanner.Decoded jump = code.get(j);
            if (jump.instruction().flow() != Flow.CONDITIONAL_JUMP || jump.text().operands().size() != 1) {
                continue;
            }
            String target = jump.text().operands().getFirst();
            if (references.getOrDefault(target, 0) != 1) {
                continue;
            }
            int h = header(code, j, target, labels);
            if (h < 0) {
                continue;
            }
            Loop loop = loop(code.subList(h, j + 1), groups, unnumbered, labels, target);
            if (loop != null) {
                loops.add(loop);
            }
        }
        return loops;
    }

    /** The position of the instruction {@code target} labels, at or before {@code j}, when every label there is ours to move past. */
    private static int header(List<FunctionPlanner.Decoded> code, int j, String target, Map<Integer, List<String>> labels) {
        for (int h = j; h >= 0; h--) {
            List<String> here = labels.get(code.get(h).index());
            if (here != null && here.contains(target)) {
                return onlyDebugLabels(here, target) ? h : -1; // else another jump target would skip the entry code
            }
        }
        return -1;
    }

    /** Whether every label but {@code except} is one of gcc's debug labels, which no jump names. */
    private static boolean onlyDebugLabels(List<String> labels, String except) {
        for (String l : labels) {
            if (!l.equals(except) && !DEBUG_LABEL.matcher(l).matches()) {
                return false;
            }
        }
        return true;
    }

    private static Loop loop(List<FunctionPlanner.Decoded> body, Map<Integer, ProbeGroups.Group> groups,
                             BitSet unnumbered, Map<Integer, List<String>> labels, String label) {
        int first = body.getFirst().index();
        Set<Register> used = new HashSet<>();
        Set<Integer> starts = new HashSet<>();
        for (int k = 0; k < body.size(); k++) {
            FunctionPlanner.Decoded d = body.get(k);
            List<String> here = labels.get(d.index());
            if (d.index() != first + k
                    || k > 0 && (unnumbered.get(d.index()) || here != null && !onlyDebugLabels(here, null))) {
                return null; // a jump target, inline assembly, a directive or another function's code inside
            }
            if (k < body.size() - 1 && d.instruction().flow() != Flow.SEQUENTIAL) {
                return null;
            }
            for (Operand o : d.instruction().operands()) {
                if (o instanceof RegisterOperand r) {
                    use(r.register(), used);
                } else if (o instanceof MemoryOperand m) {
                    use(m.base(), used);
                    use(m.index(), used);
                    if (m.segment().isSegmentWithBase()) {
                        return null;
                    }
                }
            }
            ProbeGroups.Group g = groups.get(d.index());
            if (g != null) {
                List<Site> sites = g.members().getFirst().sites();
                if (g.members().size() == 1 && !ProbeGroups.groupable(sites)) {
                    return null; // a probe of its own loads the cursor from memory
                }
                starts.add(d.index());
            }
        }
        if (starts.isEmpty() || used.contains(ProbeGroups.RSP)) {
            return null;
        }
        Register cursor = free(ProbeGroups.SCRATCH, used, null);
        Register address = free(ProbeGroups.ADDRESS, used, cursor);
        if (cursor == null || address == null) {
            return null;
        }
        return new Loop(label, body.getLast().index(), Set.copyOf(starts), cursor, address);
    }

    private static void use(Register r, Set<Register> used) {
        if (!r.isNone()) {
            used.add(r.enclosing());
        }
    }

    private static Register free(List<Register> candidates, Set<Register> used, Register taken) {
        for (Register r : candidates) {
            if (!used.contains(r) && !r.equals(taken)) {
                return r;
            }
        }
        return null;
    }
}
