package org.memtrace.rewrite;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfFormatException;
import org.memtrace.symbols.ElfSection;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryOperand;

/**
 * Where an indirect jump may land inside a function, read from the module's data (docs/rewriting.md, "Indirect
 * jumps"): the code addresses a compiler stores for one. A switch table of position-dependent code holds
 * absolute 8-byte addresses ({@code jmp *T(,%rax,8)}), as does the label table of a computed {@code goto}
 * ({@code &&label}); one of position-independent code holds 4-byte offsets from the table's start, which the
 * code takes with {@code lea T(%rip)} and adds to the entry it loads. So the addresses are every aligned
 * 8-byte value of the module's data that lies in its code, and, from every address a RIP-relative operand
 * names, the 4-byte entries before and after it that, added to it, land in code. A value that only looks like
 * one costs a run that could have moved, never a wrong one. What this cannot see is an address computed by
 * other arithmetic from a label of the function itself ({@code lea 1f(%rip),%r11; sub %rcx,%r11; jmp *%r11}),
 * which only hand-written assembly does: {@link #ownLabels} finds those functions, and they keep not moving.
 */
final class IndirectTargets {
    private static final long SHF_ALLOC = 0x2, SHF_EXECINSTR = 0x4;
    /** Entries read on either side of a table's start at most (gcc's tables stay far below). */
    private static final int MAX_ENTRIES = 1 << 16;

    private IndirectTargets() {}

    /**
     * Adds to {@code targets} the code addresses {@code elf}'s data holds for indirect jumps; {@code named}: every
     * address its instructions' operands name (RIP-relative or absolute), where a table may start.
     */
    static void add(ElfFile elf, Set<Long> named, Set<Long> targets) throws ElfFormatException {
        TreeMap<Long, Long> code = new TreeMap<>();
        TreeMap<Long, ByteBuffer> loaded = new TreeMap<>(); // each section's bytes, by its address
        for (ElfSection s : elf.sections()) {
            if ((s.flags() & SHF_ALLOC) == 0 || s.type() == ElfSection.SHT_NOBITS || s.size() == 0) continue;
            ByteBuffer b = ByteBuffer.wrap(elf.contents(s)).order(ByteOrder.LITTLE_ENDIAN);
            loaded.put(s.address(), b);
            if ((s.flags() & SHF_EXECINSTR) != 0) code.put(s.address(), s.address() + s.size());
        }
        for (var s : loaded.entrySet()) {
            if (inCode(code, s.getKey())) continue;
            ByteBuffer b = s.getValue();
            for (int at = (int) (-s.getKey() & 7); at + 8 <= b.limit(); at += 8) {
                long v = b.getLong(at);
                if (inCode(code, v)) targets.add(v);
            }
        }
        for (long base : named) {
            var s = loaded.floorEntry(base);
            if (s == null || base >= s.getKey() + s.getValue().limit()) continue;
            ByteBuffer b = s.getValue();
            int start = (int) (base - s.getKey());
            for (int step : new int[] {4, -4})
                for (int at = step > 0 ? start : start - 4, n = 0; at >= 0 && at + 4 <= b.limit() && n < MAX_ENTRIES; at += step, n++) {
                    long v = base + b.getInt(at);
                    if (!inCode(code, v)) break;
                    targets.add(v);
                }
        }
    }

    /** Whether {@code v} lies in one of the ranges of {@code code} (start to end). */
    private static boolean inCode(TreeMap<Long, Long> code, long v) {
        var r = code.floorEntry(v);
        return r != null && v < r.getValue();
    }

    /**
     * The starts of the functions (of {@code functions}, start to end) that name an address of their own body
     * but their start in a RIP-relative operand: a label whose address the function takes, from which an
     * indirect jump of its own may compute where it goes.
     */
    static Set<Long> ownLabels(List<Instruction> all, TreeMap<Long, Long> functions) {
        Set<Long> out = new java.util.HashSet<>();
        for (Instruction insn : all) {
            var f = functions.floorEntry(insn.address());
            if (f == null || insn.address() >= f.getValue()) continue;
            for (MemoryOperand m : insn.memoryOperands()) {
                long a = m.staticAddress().orElse(Long.MIN_VALUE);
                if (a > f.getKey() && a < f.getValue()) out.add(f.getKey());
            }
        }
        return out;
    }
}
