package org.memtrace.rewrite;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.memtrace.symbols.DwarfLocals;
import org.memtrace.symbols.ElfFile;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.Operand;

/**
 * The frame accesses {@code disp(%rsp)} and {@code disp(%rsp,%idx,s)} of optimised code (docs/check.md,
 * "Stack variables of optimised code"), which {@link FrameConstants} and {@link StackSlots} leave alone since
 * they read {@code %rbp}: at -O2 gcc keeps no frame pointer and addresses its frame from {@code %rsp}, and the
 * CFI says where the CFA is at each instruction ({@link CfaRows}: {@code %rsp + k}), so {@code disp - k} is the
 * access's offset from the CFA, the origin of its variables' {@code DW_OP_fbreg} ({@link DwarfLocals#readOptimised},
 * the variables of inlined calls included). Two shapes:
 *
 * <ul>
 *   <li>a constant access that overlaps a variable and has bytes in no variable (from inside one past its end,
 *       or from below into one): a bug whenever it runs, reported against the variable it overlaps
 *       ({@link FrameConstants.Finding}, the same trampoline as at -O0);
 *   <li>an indexed one whose displacement is exactly a variable's start, the index scaled by the access's size
 *       (an element of an array indexed whole: {@code movl $1,(%rsp,%rax,4)}), the variable at least two elements:
 *       checked inline against that variable, as {@link StackSlots} checks {@code %rbp} ones at -O0.
 * </ul>
 *
 * <p>Why so narrow (no false positive): optimised code keeps spill slots and temporaries in the frame outside
 * every variable, so an access wholly outside the variables is gcc's; a store gcc merged over two adjacent
 * variables is wholly inside them; a variable in a location list is not known, so it is never named. An index
 * whose constant gcc folded into the displacement ({@code a[i - 1]} as {@code a - 4}) lands between variables or
 * inside one, not at a start, unless exactly at the start of the variable below: a variable of one element is
 * never checked, one of two or more would be wrongly (not seen in the corpus, ITC or the bench programs). What
 * it does not see: accesses through a pointer register ({@code lea 0x10(%rsp),%rdi}, a loop's cursor), a VLA or
 * alloca (addressed from {@code %rbp} or a register), an access that lands inside a neighbouring variable.
 */
public final class RspFrames {
    /** An indexed access checked against {@code slot}; the CFA is {@code %rsp + rspToCfa} at its instruction. */
    record Indexed(StackSlots.Slot slot, long rspToCfa) {}

    /**
     * What the classifier found: constant accesses statically out of bounds, indexed ones to check; and, for
     * run --check's table ({@link FrameTable}), the optimised functions whose every {@code call} has the CFA at the
     * same {@code %rsp + k}, with that k, by their low address: the check runtime finds such a caller's frame
     * from the wrapper's return address (its slot + 8 is the caller's {@code %rsp} at the call), so a libc range
     * into its variables is checked (agent/check/check_frames.h). One whose calls disagree (a push between) is
     * left out. One pass over the functions' code makes all three.
     */
    record Found(Map<Long, FrameConstants.Finding> constants, Map<Long, Indexed> indexed, Map<Long, Long> calls) {
        static final Found NONE = new Found(Map.of(), Map.of(), Map.of());
    }

    private RspFrames() {}

    /** The findings of {@code functions}' code in {@code elf} (optimised functions only), by instruction address. */
    static Found of(ElfFile elf, List<DwarfLocals.Function> functions) {
        Map<Long, FrameConstants.Finding> constants = new HashMap<>();
        Map<Long, Indexed> indexed = new HashMap<>();
        Map<Long, Long> calls = new HashMap<>();
        CfaRows cfa = null;
        FunctionCode reader = new FunctionCode(elf);
        for (DwarfLocals.Function f : functions) {
            if (f.unoptimised() || f.locals().isEmpty()) continue;
            List<Instruction> code = reader.of(f);
            if (code == null) continue;
            if (cfa == null) cfa = CfaRows.of(elf); // read at the first function that needs it
            classify(f, code, cfa, constants, indexed);
            Long k = cfaAtCalls(code, cfa);
            if (k != null) calls.put(f.low(), k);
        }
        return constants.isEmpty() && indexed.isEmpty() && calls.isEmpty() ? Found.NONE
                : new Found(Map.copyOf(constants), Map.copyOf(indexed), Map.copyOf(calls));
    }

    private static void classify(DwarfLocals.Function f, List<Instruction> code, CfaRows cfa,
                                 Map<Long, FrameConstants.Finding> constants, Map<Long, Indexed> indexed) {
        for (Instruction insn : code)
            for (Operand o : insn.operands())
                if (o instanceof MemoryOperand m && m.accessesMemory() && m.base().isStackPointer() && m.base().widthBits() == 64
                        && !m.isImplicitStack() && !m.segment().isSegmentWithBase() && m.sizeBytes() > 0) {
                    Optional<Long> k = cfa.rspOffset(insn.address());
                    if (k.isEmpty()) continue;
                    long at = m.displacement() - k.get();
                    if (m.index().isNone()) {
                        FrameConstants.Finding found = constant(f, at, m.sizeBytes());
                        if (found != null) constants.put(insn.address(), found);
                    } else if (m.index().widthBits() == 64) {
                        StackSlots.Slot s = element(f, at, m.sizeBytes(), Math.max(1, m.scale()));
                        if (s != null) indexed.put(insn.address(), new Indexed(s, k.get()));
                    }
                }
    }

    /** The k of {@link Found#calls} for one function's code: null when it has no call or its calls disagree. */
    private static Long cfaAtCalls(List<Instruction> code, CfaRows cfa) {
        Long k = null;
        for (Instruction insn : code) {
            if (!insn.mnemonic().equals("call")) continue;
            Optional<Long> here = cfa.rspOffset(insn.address());
            if (here.isEmpty() || (k != null && !k.equals(here.get()))) return null;
            k = here.get();
        }
        return k;
    }

    /** A constant access {@code [at, at + n)} from the CFA that overlaps a variable and has bytes in none; else null. */
    static FrameConstants.Finding constant(DwarfLocals.Function f, long at, int n) {
        List<DwarfLocals.Local> overlapped = new ArrayList<>();
        for (DwarfLocals.Local l : f.locals())
            if (at < l.cfaOffset() + l.size() && l.cfaOffset() < at + n) overlapped.add(l);
        if (overlapped.isEmpty()) return null;
        boolean outside = false;
        for (long x = at; x < at + n && !outside; x++) {
            long y = x;
            outside = overlapped.stream().noneMatch(l -> l.cfaOffset() <= y && y < l.cfaOffset() + l.size());
        }
        if (!outside) return null;
        // the variable it starts inside, else the one it runs into from below (the nearest start above it)
        DwarfLocals.Local best = null;
        for (DwarfLocals.Local l : overlapped)
            if (l.cfaOffset() <= at && at < l.cfaOffset() + l.size() && (best == null || l.size() > best.size())) best = l;
        if (best == null)
            for (DwarfLocals.Local l : overlapped)
                if (best == null || l.cfaOffset() < best.cfaOffset()) best = l;
        return new FrameConstants.Finding(slot(f, best, best.cfaOffset(), best.size()), at - best.cfaOffset());
    }

    /** The variables starting at {@code at} (their hull) when an access of {@code n} bytes scaled by {@code scale} indexes them whole. */
    static StackSlots.Slot element(DwarfLocals.Function f, long at, int n, int scale) {
        if (scale != n) return null;
        DwarfLocals.Local first = null;
        long end = at;
        for (DwarfLocals.Local l : f.locals())
            if (l.cfaOffset() == at) {
                if (first == null || l.size() > first.size()) first = l;
                end = Math.max(end, at + l.size());
            }
        if (first == null || end - at < 2L * n || (end - at) % n != 0 || end - at >= (1L << 31)) return null;
        return slot(f, first, at, end - at);
    }

    private static StackSlots.Slot slot(DwarfLocals.Function f, DwarfLocals.Local l, long at, long size) {
        return new StackSlots.Slot(l.name(), l.scope() != null ? l.scope() : f.name(), l.line(), at, size);
    }
}
