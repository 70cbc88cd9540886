package org.memtrace.rewrite;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfFormatException;
import org.memtrace.symbols.ElfSection;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.x86.Decoder;
import org.memtrace.x86.Flow;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryAccess;
import org.memtrace.x86.MemoryOperand;

/**
 * Decides, for every memory instruction of a module's code, whether and how a trampoline traces it
 * (docs/rewriting.md, "The planner"). The code is read by a linear sweep of each executable section but the
 * PLT's, at link-time addresses: gcc and the linker put no data in those sections, which is what makes the
 * sweep exact (hand-written assembly with data in {@code .text} breaks it).
 *
 * <p>An instruction of 5 bytes or more gets a {@code jmp rel32} over itself. A shorter one takes its
 * successors into its trampoline up to the first instruction boundary 5 bytes on ("Short instructions"):
 * only where nothing can jump between them, which the planner knows for a function (by the symbol table)
 * that has no indirect jump: then every way into its middle is a direct branch or the return from a call,
 * both visible to the sweep.
 */
public final class PatchPlanner {
    /** A {@code jmp rel32}. */
    static final int JUMP_LENGTH = 5;
    private static final long SHF_EXECINSTR = 0x4;

    private final Decoder decoder;

    public PatchPlanner(Decoder decoder) { this.decoder = decoder; }

    /** What the sweep of one module found: its instructions and where control may arrive other than by falling through. */
    private record Code(List<Instruction> instructions, List<byte[]> bytes, Set<Long> targets, TreeMap<Long, Long> movable) {
        /** Whether the instructions in [from, to) lie in one function that has no indirect jump. */
        boolean movable(long from, long to) {
            var f = movable.floorEntry(from);
            return f != null && to <= f.getValue();
        }
    }

    /** One decision per memory instruction of {@code elf}'s code, in address order. */
    public List<Decision> plan(ElfFile elf) throws ElfFormatException {
        Code code = sweep(elf);
        List<Decision> out = new ArrayList<>();
        List<Instruction> all = code.instructions();
        for (int i = 0; i < all.size(); i++) {
            Instruction insn = all.get(i);
            if (insn.accesses().isEmpty()) continue;
            Decision d = decide(insn, code.bytes().get(i));
            if (d instanceof Decision.Left l && l.reason() == Decision.Reason.SHORT && !code.movable().isEmpty()) {
                Decision.Patch run = run(code, i);
                if (run == null) {
                    d = new Decision.Left(insn, Decision.Reason.NEIGHBOURS);
                } else {
                    // the moved successors are decided by the run: each memory instruction among them counts once
                    for (Decision.Part p : run.parts()) if (p != run.parts().getFirst() && !p.accesses().isEmpty()) out.add(new Decision.Covered(p.instruction()));
                    d = run;
                    i += run.parts().size() - 1;
                }
            }
            out.add(d);
        }
        return out;
    }

    /** The module's code, the places control may reach other than by falling through, and the functions whose runs may move. */
    private Code sweep(ElfFile elf) throws ElfFormatException {
        List<Instruction> all = new ArrayList<>();
        List<byte[]> bytes = new ArrayList<>();
        Set<Long> targets = new HashSet<>();
        for (ElfSection s : elf.sections()) {
            if ((s.flags() & SHF_EXECINSTR) == 0 || s.type() == ElfSection.SHT_NOBITS || s.name().startsWith(".plt")) continue;
            byte[] code = elf.contents(s);
            targets.add(s.address());
            for (Instruction insn : decoder.decodeAll(code, 0, code.length, s.address())) {
                int at = (int) (insn.address() - s.address());
                all.add(insn);
                bytes.add(Arrays.copyOfRange(code, at, at + insn.length()));
                insn.branchTarget().ifPresent(targets::add);
                if (insn.flow() == Flow.CALL) targets.add(insn.nextAddress());
            }
        }
        TreeMap<Long, Long> functions = new TreeMap<>();
        List<ElfSymbol> symbols = new ArrayList<>(elf.symtab());
        symbols.addAll(elf.dynsym());
        for (ElfSymbol s : symbols) {
            if (!s.isDefined() || s.value() == 0) continue;
            targets.add(s.value()); // any symbol may be a function pointer's or a jump's destination
            if (s.isFunction() && s.size() > 0) functions.merge(s.value(), s.value() + s.size(), Math::min);
        }
        // a module with C++ landing pads: the unwinder enters code at places no branch names (not parsed yet)
        if (elf.section(".gcc_except_table").isPresent() || elf.symtab().isEmpty()) functions.clear();
        for (Instruction insn : all) {
            boolean indirect = insn.flow() == Flow.JUMP && insn.branchTarget().isEmpty();
            var f = functions.floorEntry(insn.address());
            if (indirect && f != null && insn.address() < f.getValue()) functions.remove(f.getKey());
        }
        return new Code(all, bytes, targets, functions);
    }

    /**
     * The short memory instruction at {@code all[i]} with the successors that make 5 bytes, when they can move:
     * one function without indirect jumps, no branch target among them, each one sequential and one a probe
     * can record. Null when they cannot.
     */
    private Decision.Patch run(Code code, int i) {
        List<Instruction> all = code.instructions();
        Instruction first = all.get(i);
        if (first.flow() != Flow.SEQUENTIAL) return null;
        List<Decision.Part> parts = new ArrayList<>();
        parts.add(part(first, code.bytes().get(i)));
        if (parts.getFirst() == null) return null;
        long end = first.nextAddress();
        for (int j = i + 1; end < first.address() + JUMP_LENGTH; j++) {
            if (j >= all.size()) return null;
            Instruction next = all.get(j);
            if (next.address() != end || code.targets().contains(end) || next.flow() != Flow.SEQUENTIAL) return null;
            Decision.Part p = part(next, code.bytes().get(j));
            if (p == null) return null;
            parts.add(p);
            end = next.nextAddress();
        }
        // a short memory instruction right after the run goes with it: its own run might meet a branch target
        for (int j = i + parts.size(); j < all.size(); j++) {
            Instruction next = all.get(j);
            if (next.accesses().isEmpty() || next.length() >= JUMP_LENGTH || next.address() != end
                    || code.targets().contains(end) || next.flow() != Flow.SEQUENTIAL || !code.movable(first.address(), next.nextAddress())) break;
            Decision.Part p = part(next, code.bytes().get(j));
            if (p == null) break;
            parts.add(p);
            end = next.nextAddress();
        }
        return code.movable(first.address(), end) ? new Decision.Patch(parts) : null;
    }

    /** A sequential instruction as a part of a run, or null when a probe could not record it or its bytes could not move. */
    private Decision.Part part(Instruction insn, byte[] bytes) {
        if (insn.rep()) return null;
        int rip = -1;
        for (MemoryOperand m : insn.memoryOperands()) {
            if (m.accessesMemory() && (m.segment().isSegmentWithBase() || !addressable(m))) return null;
            if (m.isRipRelative()) {
                rip = ripDisplacement(insn, bytes, m);
                if (rip < 0) return null;
            }
        }
        for (MemoryAccess a : insn.accesses()) if (a.sizeBytes() > 255) return null;
        return new Decision.Part(insn, bytes, insn.accesses(), rip, false);
    }

    /** The decision for one instruction that accesses memory, {@code bytes} its encoding, on its own. */
    Decision decide(Instruction insn, byte[] bytes) {
        List<MemoryAccess> accesses = insn.accesses();
        boolean directCall = insn.flow() == Flow.CALL && bytes.length == JUMP_LENGTH && (bytes[0] & 0xff) == 0xe8;
        if (insn.flow() == Flow.CALL && !directCall) return new Decision.Left(insn, Decision.Reason.CALL);
        if (insn.rep()) return new Decision.Left(insn, Decision.Reason.REP);
        int rip = -1;
        for (MemoryOperand m : insn.memoryOperands()) {
            if (m.segment().isSegmentWithBase()) return new Decision.Left(insn, Decision.Reason.SEGMENT);
            if (!addressable(m)) return new Decision.Left(insn, Decision.Reason.ADDRESSING);
            if (m.isRipRelative()) {
                rip = ripDisplacement(insn, bytes, m);
                if (rip < 0) return new Decision.Left(insn, Decision.Reason.ADDRESSING);
            }
        }
        for (MemoryAccess a : accesses) if (a.sizeBytes() > 255) return new Decision.Left(insn, Decision.Reason.ADDRESSING);
        if (insn.length() < JUMP_LENGTH) return new Decision.Left(insn, Decision.Reason.SHORT);
        return new Decision.Patch(List.of(new Decision.Part(insn, bytes, accesses, rip, directCall)));
    }

    /** Whether a probe's {@code lea} can compute the operand: 64-bit general registers only (no VSIB, no addr32). */
    private static boolean addressable(MemoryOperand m) {
        boolean base = m.base().isNone() || m.isRipRelative() || m.base().widthBits() == 64;
        boolean index = m.index().isNone() || m.index().widthBits() == 64;
        return base && index;
    }

    /**
     * Where the RIP-relative displacement sits in {@code bytes}: the 4-byte field holding it that, changed,
     * changes the decoded displacement by as much (so an immediate that happens to hold the same bytes is
     * not taken for it); -1 when none does.
     */
    private int ripDisplacement(Instruction insn, byte[] bytes, MemoryOperand m) {
        for (int p = bytes.length - 4; p >= 1; p--) {
            if (readInt(bytes, p) != (int) m.displacement()) continue;
            byte[] moved = bytes.clone();
            writeInt(moved, p, (int) m.displacement() + 0x1000);
            Optional<Instruction> again = decoder.decode(moved, 0, insn.address());
            if (again.isEmpty() || again.get().length() != bytes.length) continue;
            for (MemoryOperand o : again.get().memoryOperands())
                if (o.isRipRelative() && o.displacement() == m.displacement() + 0x1000) return p;
        }
        return -1;
    }

    static int readInt(byte[] b, int p) {
        return (b[p] & 0xff) | (b[p + 1] & 0xff) << 8 | (b[p + 2] & 0xff) << 16 | (b[p + 3] & 0xff) << 24;
    }

    static void writeInt(byte[] b, int p, int v) {
        for (int i = 0; i < 4; i++) b[p + i] = (byte) (v >>> 8 * i);
    }
}
