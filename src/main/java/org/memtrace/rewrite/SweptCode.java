package org.memtrace.rewrite;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfFormatException;
import org.memtrace.symbols.ElfSection;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.x86.Decoder;
import org.memtrace.x86.Flow;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryOperand;

/**
 * What {@link PatchPlanner}'s sweep of one module found: its instructions (with their bytes), where control
 * may arrive other than by falling through, and the functions whose runs may move, start to end.
 */
record SweptCode(List<Instruction> instructions, List<byte[]> bytes, Set<Long> targets, TreeMap<Long, Long> movable) {
    private static final long SHF_EXECINSTR = 0x4;

    /** Whether the instructions in [from, to) lie in one function whose ways in are all known. */
    boolean movable(long from, long to) {
        var f = movable.floorEntry(from);
        return f != null && to <= f.getValue();
    }

    /** The module's code, the places control may reach other than by falling through, and the functions whose runs may move. */
    static SweptCode of(Decoder decoder, ElfFile elf) throws ElfFormatException {
        List<Instruction> all = new ArrayList<>();
        List<byte[]> bytes = new ArrayList<>();
        Set<Long> targets = new HashSet<>();
        for (ElfSection s : elf.sections()) {
            // the PLT's too: each of its memory instructions (jmp *GOT, push $n, PLT0's push) is 5 bytes or more
            if ((s.flags() & SHF_EXECINSTR) == 0 || s.type() == ElfSection.SHT_NOBITS) continue;
            byte[] code = elf.contents(s);
            targets.add(s.address());
            long from = s.address();
            for (long[] d : dataIn(elf, s)) {
                decode(decoder, code, s.address(), from, d[0], all, bytes, targets);
                from = Math.max(from, d[1]);
            }
            decode(decoder, code, s.address(), from, s.address() + code.length, all, bytes, targets);
        }
        Set<Long> named = new HashSet<>(); // every address an operand names: a lea of code is a pointer, data a table's start
        for (Instruction insn : all)
            for (MemoryOperand m : insn.memoryOperands()) m.staticAddress().ifPresent(named::add);
        targets.addAll(named);
        targets.addAll(relocated(elf));
        IndirectTargets.add(elf, named, targets);
        TreeMap<Long, Long> functions = functions(elf, targets);
        // an indirect jump lands on an address the data holds (a target now) unless its function computes one
        // from a label of its own
        Set<Long> own = IndirectTargets.ownLabels(all, functions);
        for (Instruction insn : all) {
            boolean indirect = insn.flow() == Flow.JUMP && insn.branchTarget().isEmpty();
            var f = functions.floorEntry(insn.address());
            if (indirect && f != null && insn.address() < f.getValue() && own.contains(f.getKey())) functions.remove(f.getKey());
        }
        return new SweptCode(all, bytes, targets, functions);
    }

    /** Decodes {@code code} (loaded at {@code base}) from {@code from} to {@code to}, adding what it finds. */
    private static void decode(Decoder decoder, byte[] code, long base, long from, long to, List<Instruction> all, List<byte[]> bytes, Set<Long> targets) {
        if (to <= from) return;
        for (Instruction insn : decoder.decodeAll(code, (int) (from - base), (int) (to - from), from)) {
            int at = (int) (insn.address() - base);
            all.add(insn);
            bytes.add(Arrays.copyOfRange(code, at, at + insn.length()));
            insn.branchTarget().ifPresent(targets::add);
            if (insn.flow() == Flow.CALL) targets.add(insn.nextAddress());
        }
    }

    /**
     * The data the symbol tables place in code section {@code s} (sized {@code STT_OBJECT} symbols, which
     * hand-written assembly declares with {@code .type x, @object}), start to end in address order: the sweep
     * skips them, so no patch overwrites a table, and starts again at each one's end, where the code after it
     * begins (a table whose last bytes begin an instruction would otherwise swallow that code's first bytes).
     */
    private static List<long[]> dataIn(ElfFile elf, ElfSection s) throws ElfFormatException {
        List<ElfSymbol> symbols = new ArrayList<>(elf.symtab());
        symbols.addAll(elf.dynsym());
        List<long[]> out = new ArrayList<>();
        long end = s.address() + s.size();
        for (ElfSymbol x : symbols)
            if (x.isDefined() && x.isObject() && x.size() > 0 && x.value() >= s.address() && x.value() < end)
                out.add(new long[] {x.value(), Math.min(end, x.value() + x.size())});
        out.sort(java.util.Comparator.comparingLong((long[] r) -> r[0]));
        return out;
    }

    /**
     * The functions whose runs may move, start to end: one per FDE of {@code .eh_frame} but those whose LSDA
     * could not be read (the unwinder enters a landing pad at an address no branch names: every landing pad
     * read becomes a target), and, where no FDE covers any of its bytes,
     * each sized function of the symbol table in a module without {@code .gcc_except_table} (hand-written
     * assembly without CFI). Every FDE start and symbol value becomes a target: a function pointer may hold it.
     */
    private static TreeMap<Long, Long> functions(ElfFile elf, Set<Long> targets) throws ElfFormatException {
        List<long[]> ranges = new ArrayList<>(); // start, end, 1 when it may move
        TreeMap<Long, Long> described = new TreeMap<>();
        for (EhFrame.Fde f : EhFrame.of(elf).fdes()) {
            targets.add(f.start());
            targets.addAll(f.landingPads());
            described.merge(f.start(), f.end(), Math::max);
            ranges.add(new long[] {f.start(), f.end(), f.opaque() ? 0 : 1});
        }
        List<ElfSymbol> symbols = new ArrayList<>(elf.symtab());
        symbols.addAll(elf.dynsym());
        boolean pads = elf.section(".gcc_except_table").isPresent();
        for (ElfSymbol s : symbols) {
            if (!s.isDefined() || s.value() == 0) continue;
            targets.add(s.value()); // any symbol may be a function pointer's or a jump's destination
            long end = s.value() + s.size();
            if (pads || !s.isFunction() || s.size() <= 0) continue;
            var before = described.floorEntry(s.value());
            var inside = described.ceilingKey(s.value());
            boolean covered = before != null && before.getValue() > s.value() || inside != null && inside < end;
            if (!covered) ranges.add(new long[] {s.value(), end, 1});
        }
        // ranges that overlap (a symbol's function inside another, an FDE of code a symbol also sizes): none moves
        ranges.sort(java.util.Comparator.comparingLong((long[] r) -> r[0]).thenComparingLong(r -> r[1]));
        long reach = Long.MIN_VALUE;
        long[] last = null;
        for (long[] r : ranges) {
            if (r[0] < reach) {
                r[2] = 0;
                if (last != null) last[2] = 0;
            }
            if (r[1] > reach) {
                reach = r[1];
                last = r;
            }
        }
        TreeMap<Long, Long> functions = new TreeMap<>();
        for (long[] r : ranges) if (r[2] == 1) functions.put(r[0], r[1]);
        return functions;
    }

    /**
     * The code addresses the dynamic relocations write into data (R_X86_64_RELATIVE and IRELATIVE addends):
     * function pointers of a position-independent module, which may name any instruction.
     */
    private static Set<Long> relocated(ElfFile elf) throws ElfFormatException {
        Set<Long> out = new HashSet<>();
        for (ElfSection s : elf.sections()) {
            if (s.type() != ElfSection.SHT_RELA || s.size() % 24 != 0) continue;
            var b = elf.contentsOf(s).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            for (int at = 0; at + 24 <= b.limit(); at += 24) {
                int type = (int) b.getLong(at + 8);
                if (type == 8 || type == 37) out.add(b.getLong(at + 16));
            }
        }
        return out;
    }
}
