package org.memtrace.select;

import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfFormatException;
import org.memtrace.symbols.ElfSection;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryOperand;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * Where the static operands of a file's code point, as a place: the data symbol that contains the target
 * plus an offset into it ({@code table+40}), or, when no symbol contains it, the target alone (a string
 * literal, a jump table). A GOT slot is a place of its own too, marked as such ({@code @GOTPCREL} in an
 * object, an address in {@code .got} in a linked file). A relocatable object and the file it is linked into see the same
 * places: the object through its relocations (section symbol + addend, or a global symbol), the linked
 * file through its symbol table, which maps an address back. So chunk distances between static operands,
 * and with them the selection, do not depend on the link (docs/selective-instrumentation.md, "BID
 * expressions"). Without a symbol table (a stripped file) every target is a place of its own.
 */
public final class StaticPlaces {
    private static final int R_X86_64_64 = 1;
    private static final int R_X86_64_PC32 = 2;
    private static final int R_X86_64_PLT32 = 4;
    private static final int R_X86_64_GOTPCREL = 9;
    private static final int R_X86_64_32 = 10;
    private static final int R_X86_64_32S = 11;
    private static final int R_X86_64_GOTPCRELX = 41;
    private static final int R_X86_64_REX_GOTPCRELX = 42;
    private static final int STT_NOTYPE = 0;

    /** An object symbol a place can be inside of. */
    private record Extent(String name, long start, long size) {
    }

    /** A relocation of a code section: where its field is, its type, symbol and addend. */
    private record Relocation(long offset, int type, int symbol, long addend) {
    }

    private final ElfFile elf;
    private final boolean relocatable;
    private final boolean symbolTable;
    private final boolean fixedAddress;
    private final long imageStart;
    private final long imageEnd;
    /** The section {@link #resolve(List)} reads: .text of a relocatable object. */
    private final int textSection;
    /** By section index (0 for a linked file, whose addresses are one space): symbols by start. */
    private final Map<Integer, NavigableMap<Long, Extent>> extents = new HashMap<>();
    private final Map<Integer, NavigableMap<Long, Relocation>> relocations = new HashMap<>();
    /** [start, end) of a linked file's .got and .got.plt. */
    private final List<long[]> gotSections = new java.util.ArrayList<>();

    private StaticPlaces(ElfFile elf, int textSection, boolean fixedAddress, long imageStart, long imageEnd)
            throws ElfFormatException {
        this.elf = elf;
        this.textSection = textSection;
        this.relocatable = elf.type() == ElfFile.ET_REL;
        this.fixedAddress = fixedAddress;
        this.imageStart = imageStart;
        this.imageEnd = imageEnd;
        boolean hasSymtab = elf.sections().stream().anyMatch(s -> s.type() == ElfSection.SHT_SYMTAB);
        this.symbolTable = hasSymtab;
        for (ElfSymbol s : hasSymtab ? elf.symtab() : elf.dynsym()) {
            if (!s.isDefined() || s.size() <= 0 || s.name().startsWith(".L")
                    || !(s.isObject() || s.isFunction() || s.type() == STT_NOTYPE)) {
                continue;
            }
            var byStart = extents.computeIfAbsent(relocatable ? s.sectionIndex() : 0, k -> new TreeMap<>());
            Extent known = byStart.get(s.value());
            // aliases: the widest, then the first name in order, so both views pick the same one
            if (known == null || s.size() > known.size() || (s.size() == known.size() && s.name().compareTo(known.name()) < 0)) {
                byStart.put(s.value(), new Extent(s.name(), s.value(), s.size()));
            }
        }
        if (relocatable) {
            readRelocations();
        } else {
            for (ElfSection section : elf.sections()) {
                if (section.name().equals(".got") || section.name().equals(".got.plt")) {
                    gotSections.add(new long[] {section.address(), section.address() + section.size()});
                }
            }
        }
    }

    /**
     * The places of {@code elf}'s code in section {@code textSection}; {@code fixedAddress} and the image
     * bounds as {@link ElfText} has them.
     */
    static StaticPlaces of(ElfFile elf, int textSection, boolean fixedAddress, long imageStart, long imageEnd)
            throws ElfFormatException {
        return new StaticPlaces(elf, textSection, fixedAddress, imageStart, imageEnd);
    }

    /** The places of a relocatable object's code (the {@code memtrace cc} rewriter's labeled object). */
    public static StaticPlaces ofObject(ElfFile elf) throws ElfFormatException {
        if (elf.type() != ElfFile.ET_REL) {
            throw new IllegalArgumentException(elf.path() + " is not a relocatable object");
        }
        return new StaticPlaces(elf, 0, false, 0, 0);
    }

    private void readRelocations() throws ElfFormatException {
        for (ElfSection rela : elf.sections()) {
            if (rela.type() != ElfSection.SHT_RELA || rela.entrySize() != 24) {
                continue;
            }
            ByteBuffer r = ByteBuffer.wrap(elf.contents(rela)).order(ByteOrder.LITTLE_ENDIAN);
            var byOffset = relocations.computeIfAbsent(rela.info(), k -> new TreeMap<>());
            for (int at = 0; at + 24 <= r.capacity(); at += 24) {
                long info = r.getLong(at + 8);
                byOffset.put(r.getLong(at), new Relocation(r.getLong(at), (int) info, (int) (info >>> 32), r.getLong(at + 16)));
            }
        }
    }

    /** False for a stripped file: its places are bare targets, not the symbols an object's relocations name. */
    public boolean fromSymbolTable() {
        return symbolTable;
    }

    /** {@link #resolve(int, List)} for code of the file's .text. */
    public Map<Long, BidParameter.Place> resolve(List<Instruction> code) {
        return resolve(textSection, code);
    }

    /**
     * The place of each instruction of {@code code} with a static operand (RIP-relative; or in a
     * fixed-address file or through an absolute relocation, a displacement that is a static object's
     * address), by instruction address. {@code section} is the code's section index in a relocatable
     * object, where the instructions' addresses are offsets into it; ignored for a linked file. Call it on
     * the code as decoded, before anything changes instruction lengths.
     */
    public Map<Long, BidParameter.Place> resolve(int section, List<Instruction> code) {
        var result = new HashMap<Long, BidParameter.Place>();
        for (Instruction insn : code) {
            for (MemoryOperand m : insn.memoryOperands()) {
                BidParameter.Place p = relocatable ? fromRelocation(section, insn, m) : fromAddress(m);
                if (p != null) {
                    result.put(insn.address(), p);
                    break;
                }
            }
        }
        return result;
    }

    private BidParameter.Place fromAddress(MemoryOperand m) {
        if (m.segment().isSegmentWithBase()) {
            return null;
        }
        if (m.isRipRelative()) {
            if (m.staticAddress().isEmpty()) {
                return null;
            }
            long target = m.staticAddress().getAsLong();
            for (long[] got : gotSections) {
                if (target >= got[0] && target < got[1]) {
                    return new BidParameter.Place(target, "0x" + Long.toHexString(target) + "@GOT", 0, true);
                }
            }
            return at(0, target, target);
        }
        long d = m.displacement();
        return fixedAddress && d >= imageStart && d < imageEnd ? at(0, d, d) : null;
    }

    private BidParameter.Place fromRelocation(int section, Instruction insn, MemoryOperand m) {
        if (m.segment().isSegmentWithBase()) {
            return null;
        }
        var inSection = relocations.get(section);
        if (inSection == null) {
            return null;
        }
        // the first relocation in the instruction's bytes: a displacement comes before an immediate
        Map.Entry<Long, Relocation> e = inSection.ceilingEntry(insn.address());
        if (e == null || e.getKey() >= insn.nextAddress()) {
            return null;
        }
        Relocation r = e.getValue();
        boolean pcRelative = r.type() == R_X86_64_PC32 || r.type() == R_X86_64_PLT32;
        boolean got = r.type() == R_X86_64_GOTPCREL || r.type() == R_X86_64_GOTPCRELX || r.type() == R_X86_64_REX_GOTPCRELX;
        boolean absolute = r.type() == R_X86_64_32 || r.type() == R_X86_64_32S || r.type() == R_X86_64_64;
        if (m.isRipRelative() ? !(pcRelative || got) : !absolute) {
            return null;
        }
        List<ElfSymbol> symbols = elf.symtab();
        if (r.symbol() <= 0 || r.symbol() >= symbols.size()) {
            return null;
        }
        ElfSymbol s = symbols.get(r.symbol());
        // S + A - P in the field; the operand adds the distance from the field to the instruction's end
        long offset = r.addend() + (m.isRipRelative() ? insn.nextAddress() - r.offset() : 0);
        if (got) {
            return new BidParameter.Place(Long.MIN_VALUE + r.symbol(), s.name() + "@GOT", 0, true);
        }
        if (!s.isDefined()) {
            return new BidParameter.Place(-1 - (long) r.symbol(), s.name(), offset);
        }
        long target = s.value() + offset;
        return at(s.sectionIndex(), target, ((long) s.sectionIndex() << 40) + target);
    }

    /** The place of {@code target}: inside a symbol of {@code section}, else the target alone ({@code identity}). */
    private BidParameter.Place at(int section, long target, long identity) {
        var byStart = extents.get(section);
        Map.Entry<Long, Extent> e = byStart == null ? null : byStart.floorEntry(target);
        if (e != null && target - e.getKey() < e.getValue().size()) {
            Extent x = e.getValue();
            long base = relocatable ? ((long) section << 40) + x.start() : x.start();
            return new BidParameter.Place(base, x.name(), target - x.start());
        }
        String name = relocatable ? elf.sections().get(section).name() + "+0x" + Long.toHexString(target)
                : "0x" + Long.toHexString(target);
        return new BidParameter.Place(identity, name, 0);
    }
}
