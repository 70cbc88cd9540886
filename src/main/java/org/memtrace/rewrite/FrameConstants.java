package org.memtrace.rewrite;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.memtrace.symbols.DwarfLocals;
import org.memtrace.symbols.ElfFile;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryAccess;
import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.Operand;
import org.memtrace.x86.RegisterOperand;

/**
 * The constant-offset frame accesses {@code disp(%rbp)} of gcc -O0 code that are statically out of bounds
 * (docs/check.md, "Constant offsets past a stack variable"): {@code buf[5] = 1} of {@code char buf[5]} is one
 * store whose displacement is fixed, so where it lands is known before the program runs. An access that a
 * DWARF variable of its function holds whole can never fail (such slots are not checked at all:
 * {@link StackSlots#frameSlot}); one that starts inside a variable and ends past it, one that ends inside a
 * variable having started below it, a write to the saved {@code %rbp} or return address, and one in bytes no
 * variable holds that can be no temporary of gcc's is a bug whenever it runs: its trampoline reports it
 * unconditionally, against the variable it overran ({@link CheckProbe}).
 *
 * <p>What gcc -O0 keeps in its frame outside every DWARF variable, and so is never reported: the registers it
 * pushes after {@code mov %rsp,%rbp} (read back at the epilogue), the stack protector's canary (the slot next
 * to an {@code %fs:0x28} access), what the prologue stores from registers outside the parameters' slots (a
 * hidden struct-return pointer), reads of the saved {@code %rbp}, the return address and the caller's frame
 * above them ({@code __builtin_frame_address}, {@code __builtin_return_address}; a {@code short} passed on the
 * stack is read there as 4 bytes before its copy into the parameter's slot), and its temporaries (an x87
 * control word, a struct a callee returns in memory). A temporary is written and read, or reached through an
 * address ({@code lea}); so bytes no variable touches are reported only when every constant access to them
 * only writes, or only reads, and the function takes no address of its frame outside its variables. Only
 * functions whose every variable DWARF places ({@link DwarfLocals.Function#described}): no VLA, no variable
 * arguments. An access that lands inside a neighbouring variable cannot be told from one of that variable:
 * not seen.
 */
final class FrameConstants {
    /** An access reported against {@code slot}, at {@code offset} from its start (negative: before it). */
    record Finding(StackSlots.Slot slot, long offset) {}

    /** A constant access {@code disp(%rbp)}: bytes {@code [at, at + n)} from the CFA ({@code %rbp + 16}). */
    private record Access(long insn, long at, int n, boolean read, boolean write) {
        boolean overlaps(long lo, long hi) { return at < hi && lo < at + n; }
    }

    private FrameConstants() {}

    /** The findings of {@code functions}' code in {@code elf}, by instruction address. */
    static Map<Long, Finding> of(ElfFile elf, List<DwarfLocals.Function> functions) {
        Map<Long, Finding> out = new HashMap<>();
        FunctionCode reader = new FunctionCode(elf);
        for (DwarfLocals.Function f : functions) {
            if (!f.unoptimised() || !f.described() || f.locals().isEmpty()) continue;
            List<Instruction> code = reader.of(f);
            if (code != null) classify(f, code, out);
        }
        return out;
    }

    private static void classify(DwarfLocals.Function f, List<Instruction> code, Map<Long, Finding> out) {
        List<long[]> owned = new ArrayList<>(); // [lo, hi) from the CFA: gcc's, no variable's
        int i = prologue(code, owned);
        owned.removeIf(r -> holder(f, r[0], (int) (r[1] - r[0])) != null); // a parameter's own slot: its variable's
        boolean escapes = false;
        List<Access> accesses = new ArrayList<>();
        for (int j = 0; j < code.size(); j++) {
            Instruction insn = code.get(j);
            for (Operand o : insn.operands()) {
                if (o instanceof MemoryOperand m && m.base().isFramePointer() && !m.isImplicitStack()) {
                    if (m.accessesMemory() && m.index().isNone() && !m.segment().isSegmentWithBase() && m.sizeBytes() > 0) {
                        Access a = new Access(insn.address(), m.displacement() - 16, m.sizeBytes(), m.read(), m.write());
                        if (canary(code, j)) owned.add(new long[] {a.at, a.at + a.n});
                        accesses.add(a);
                    } else if (!m.accessesMemory() && (!m.index().isNone() || holder(f, m.displacement() - 16, 1) == null)) {
                        escapes = true; // an address into the frame outside the variables: a temporary reached through it
                    }
                } else if (j >= i && o instanceof RegisterOperand r && r.read() && r.register().isFramePointer()
                        && r.visibility() == Operand.Visibility.EXPLICIT && !insn.mnemonic().startsWith("pop") && !insn.mnemonic().equals("leave")) {
                    escapes = true; // %rbp itself copied: any frame address may be reached
                }
            }
        }
        for (Access a : accesses) {
            if (holder(f, a.at, a.n) != null) continue;
            // the saved %rbp, the return address and the caller's frame (stack arguments, read wider than their
            // type before their copy into the parameter's slot): reads are gcc's, writes a bug
            boolean saved = a.at + a.n > -16;
            if ((saved && !a.write) || owned.stream().anyMatch(r -> a.overlaps(r[0], r[1]))) continue;
            boolean overlaps = f.locals().stream().anyMatch(l -> a.overlaps(l.cfaOffset(), l.cfaOffset() + l.size()));
            Finding found = null;
            if (overlaps || saved) found = named(f, a); // past a variable's end, into one from below, over the saved registers
            else if (!escapes) {
                boolean reads = false, writes = false;
                for (Access b : accesses)
                    if (b.overlaps(a.at, a.at + a.n)) { reads |= b.read; writes |= b.write; }
                if (!(reads && writes)) found = named(f, a);
            }
            if (found != null) out.put(a.insn, found);
        }
    }

    /**
     * The index of the first instruction past the prologue ({@code [endbr64] push %rbp; mov %rsp,%rbp}, then
     * pushes, {@code sub $N,%rsp}, register moves and stores of registers into the frame: gcc -O0 spills its
     * arguments there first); adds the pushed registers' slots and the stored ones to {@code owned}.
     */
    private static int prologue(List<Instruction> code, List<long[]> owned) {
        int i = 0, pushes = 0;
        while (i < code.size()) {
            Instruction insn = code.get(i);
            String op = insn.mnemonic();
            List<MemoryOperand> mem = insn.memoryOperands();
            if (i < 3 && (op.equals("endbr64") || (op.equals("push") && i <= 1) || (op.equals("mov") && mem.isEmpty()))) { i++; continue; }
            if (op.equals("push") && insn.operands().getFirst() instanceof RegisterOperand) {
                pushes++;
                owned.add(new long[] {-16 - 8L * pushes, -16 - 8L * (pushes - 1)});
            } else if (op.equals("sub") && mem.isEmpty()) {
                // the frame's size
            } else if (mem.isEmpty() && op.startsWith("mov")) {
                // a register copied: a struct parameter's halves on their way to its slot
            } else if (mem.size() == 1 && mem.getFirst().write() && !mem.getFirst().read() && mem.getFirst().base().isFramePointer()
                    && mem.getFirst().index().isNone() && op.startsWith("mov")
                    && insn.operands().stream().anyMatch(o -> o instanceof RegisterOperand r && r.read() && r.visibility() == Operand.Visibility.EXPLICIT)) {
                MemoryOperand m = mem.getFirst();
                owned.add(new long[] {m.displacement() - 16, m.displacement() - 16 + m.sizeBytes()});
            } else {
                break;
            }
            i++;
        }
        return i;
    }

    /** Whether the access at {@code code[j]} is the stack protector's: its neighbour reads {@code %fs:0x28}. */
    private static boolean canary(List<Instruction> code, int j) {
        for (int k = Math.max(0, j - 1); k <= Math.min(code.size() - 1, j + 1); k++)
            if (k != j && code.get(k).memoryOperands().stream().anyMatch(m -> m.segment().isSegmentWithBase())) return true;
        return false;
    }

    /** A variable of {@code f} holding {@code [at, at + n)} whole, or null. */
    private static DwarfLocals.Local holder(DwarfLocals.Function f, long at, int n) {
        for (DwarfLocals.Local l : f.locals())
            if (l.cfaOffset() <= at && at + n <= l.cfaOffset() + l.size()) return l;
        return null;
    }

    /**
     * The variable {@code a} overran: one it starts inside; else one of which it could be an element (its size
     * a multiple of the access's, the access a whole number of those from its start: {@code t[-1]} of a
     * {@code long t[4]} names {@code t}, not the {@code int} it half covers); then the nearest (overlapping
     * first), below it before above it at the same distance (an overflow rather than an underflow, as ASan's
     * redzone between them would say).
     */
    private static Finding named(DwarfLocals.Function f, Access a) {
        DwarfLocals.Local best = null;
        long bestRank = Long.MAX_VALUE;
        for (DwarfLocals.Local l : f.locals()) {
            long lo = l.cfaOffset(), hi = lo + l.size();
            boolean inside = lo <= a.at && a.at < hi;
            boolean element = l.size() % a.n == 0 && Math.floorMod(a.at - lo, a.n) == 0;
            long distance = a.at >= hi ? a.at - hi : a.at + a.n <= lo ? lo - (a.at + a.n) : 0;
            if (distance > (1L << 40)) continue;
            long rank = ((inside ? 0L : 2L) + (element ? 0L : 1L)) << 42 | distance << 1 | (a.at >= hi ? 0 : 1);
            if (rank < bestRank) { bestRank = rank; best = l; }
        }
        return best == null ? null : finding(f, best, a);
    }

    private static Finding finding(DwarfLocals.Function f, DwarfLocals.Local l, Access a) {
        return new Finding(new StackSlots.Slot(l.name(), f.name(), l.line(), l.cfaOffset(), l.size()), a.at - l.cfaOffset());
    }
}
