package org.memtrace.rewrite;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfFormatException;
import org.memtrace.symbols.ElfSection;
import org.memtrace.x86.Decoder;
import org.memtrace.x86.Flow;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryAccess;
import org.memtrace.x86.MemoryOperand;

/**
 * Decides, for every memory instruction of a module's code, whether a trampoline can trace it
 * (docs/rewriting.md, "The planner"). The code is read by a linear sweep of each executable section but the
 * PLT's, at link-time addresses: gcc and the linker put no data in those sections, which is what makes the
 * sweep exact (hand-written assembly with data in {@code .text} breaks it).
 */
public final class PatchPlanner {
    /** A {@code jmp rel32}. */
    static final int JUMP_LENGTH = 5;
    private static final long SHF_EXECINSTR = 0x4;

    private final Decoder decoder;

    public PatchPlanner(Decoder decoder) { this.decoder = decoder; }

    /** One decision per memory instruction of {@code elf}'s code, in address order. */
    public List<Decision> plan(ElfFile elf) throws ElfFormatException {
        List<Decision> out = new ArrayList<>();
        for (ElfSection s : elf.sections()) {
            if ((s.flags() & SHF_EXECINSTR) == 0 || s.type() == ElfSection.SHT_NOBITS || s.name().startsWith(".plt")) continue;
            byte[] code = elf.contents(s);
            for (Instruction insn : decoder.decodeAll(code, 0, code.length, s.address())) {
                if (insn.accesses().isEmpty()) continue;
                int at = (int) (insn.address() - s.address());
                out.add(decide(insn, Arrays.copyOfRange(code, at, at + insn.length())));
            }
        }
        return out;
    }

    /** The decision for one instruction that accesses memory, {@code bytes} its encoding. */
    Decision decide(Instruction insn, byte[] bytes) {
        List<MemoryAccess> accesses = insn.accesses();
        if (insn.flow() == Flow.CALL) return new Decision.Left(insn, Decision.Reason.CALL);
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
        return new Decision.Patch(insn, bytes, accesses, rip);
    }

    /** Whether a probe's {@code lea} can compute the operand: 64-bit general registers only (no VSIB, no addr32). */
    private static boolean addressable(MemoryOperand m) {
        boolean base = m.base().isNone() || m.isRipRelative() || m.base().widthBits() == 64;
        boolean index = m.index().isNone() || m.index().widthBits() == 64 && !m.index().name().startsWith("zmm")
                && !m.index().name().startsWith("ymm") && !m.index().name().startsWith("xmm");
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
