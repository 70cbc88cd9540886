package org.memtrace.select;

import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfFormatException;
import org.memtrace.symbols.ElfSection;
import org.memtrace.symbols.ElfSegment;
import org.memtrace.symbols.ElfSymbol;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The .text section of an x86-64 ELF file and the functions in it: just what the static analysis needs,
 * taken from an {@link ElfFile}'s sections and .symtab (or .dynsym when the file is stripped); see
 * {@link #withGaps} for code no symbol covers. Relocations are not applied, so in a relocatable object
 * RIP-relative targets stay unresolved; {@code places} names them (and a linked file's) as symbol + offset.
 *
 * @param kind         "executable", "shared library" or "relocatable object"
 * @param fixedAddress the file is linked at fixed addresses (ET_EXEC): a displacement inside
 *                     {@code [imageStart, imageEnd)} is then the address of a static object
 * @param places       where the static operands of the code point
 */
public record ElfText(Path path, String kind, long textAddress, byte[] text, List<FunctionSymbol> functions,
                      boolean fixedAddress, long imageStart, long imageEnd, StaticPlaces places) {

    public static final String RELOCATABLE = "relocatable object";

    public static ElfText read(Path path) throws IOException {
        return of(open(path));
    }

    /** The ELF file at {@code path}, for a caller that reads more of it than {@link #of} does. */
    public static ElfFile open(Path path) throws IOException {
        // ElfFile.read would report these as a bare path; the CLI prints the message as it is.
        if (!Files.exists(path)) {
            throw new IOException(path + ": no such file");
        }
        if (!Files.isRegularFile(path)) {
            throw new IOException(path + ": not a regular file");
        }
        return ElfFile.read(path);
    }

    public static ElfText of(ElfFile elf) throws ElfFormatException {
        Path path = elf.path();
        String kind = switch (elf.type()) {
            case ElfFile.ET_REL -> RELOCATABLE;
            case ElfFile.ET_EXEC -> "executable";
            case ElfFile.ET_DYN -> "shared library";
            default -> throw new ElfFormatException(path + ": ELF type " + elf.type() + " is not code memtrace can analyze");
        };
        List<ElfSection> sections = elf.sections();
        int textIndex = 0;
        while (textIndex < sections.size() && !sections.get(textIndex).name().equals(".text")) {
            textIndex++;
        }
        if (textIndex == sections.size()) {
            throw new ElfFormatException(path + ": no .text section");
        }
        ElfSection text = sections.get(textIndex);
        if (text.type() == ElfSection.SHT_NOBITS) {
            throw new ElfFormatException(path + ": .text has no contents in the file");
        }
        byte[] code = elf.contents(text);

        List<FunctionSymbol> functions = withGaps(functions(elf, textIndex, text), text);
        long start = Long.MAX_VALUE, end = 0;
        if (elf.type() == ElfFile.ET_EXEC) {
            for (ElfSegment s : elf.loadSegments()) {
                start = Math.min(start, s.vaddr());
                end = Math.max(end, s.vaddr() + s.memSize());
            }
        }
        boolean fixed = elf.type() == ElfFile.ET_EXEC && start < end;
        long imageStart = fixed ? start : 0, imageEnd = fixed ? end : 0;
        return new ElfText(path, kind, text.address(), code, functions, fixed, imageStart, imageEnd,
                StaticPlaces.of(elf, textIndex, fixed, imageStart, imageEnd));
    }

    /** Function symbols in .text, one per address (aliases collapse onto the first global name), sorted. */
    private static List<FunctionSymbol> functions(ElfFile elf, int textIndex, ElfSection text) {
        // .dynsym only when there is no .symtab at all: a present but empty .symtab means no symbols.
        boolean hasSymtab = elf.sections().stream().anyMatch(s -> s.type() == ElfSection.SHT_SYMTAB);
        boolean relocatable = elf.type() == ElfFile.ET_REL;
        Map<Long, FunctionSymbol> byAddress = new LinkedHashMap<>();
        Map<Long, Boolean> global = new LinkedHashMap<>();
        for (ElfSymbol s : hasSymtab ? elf.symtab() : elf.dynsym()) {
            if (!s.isFunction() || s.sectionIndex() != textIndex || s.size() <= 0) {
                continue;
            }
            // In a relocatable object a symbol's value is an offset into its section.
            long address = relocatable ? text.address() + s.value() : s.value();
            if (address < text.address() || address + s.size() > text.address() + text.size()) {
                continue;
            }
            boolean isGlobal = s.binding() != ElfSymbol.STB_LOCAL;
            FunctionSymbol known = byAddress.get(address);
            if (known == null || (isGlobal && !global.get(address))) {
                byAddress.put(address, new FunctionSymbol(s.storedName(), address, s.size()));
                global.put(address, isGlobal);
            }
        }
        var result = new ArrayList<>(byAddress.values());
        result.sort(Comparator.comparingLong(FunctionSymbol::address));
        return List.copyOf(result);
    }

    /**
     * Adds a pseudo-function for every stretch of .text no symbol covers (all of it for a stripped file,
     * local functions of a library that only has .dynsym), so every instruction is analyzed. Its name is
     * the stretch's position, {@code .text+0x1c40}.
     */
    private static List<FunctionSymbol> withGaps(List<FunctionSymbol> symbols, ElfSection text) {
        var result = new ArrayList<FunctionSymbol>(symbols.size() * 2 + 1);
        long cursor = text.address();
        for (FunctionSymbol f : symbols) {
            if (f.address() > cursor) {
                result.add(gap(text, cursor, f.address()));
            }
            result.add(f);
            cursor = Math.max(cursor, f.end());
        }
        if (cursor < text.address() + text.size()) {
            result.add(gap(text, cursor, text.address() + text.size()));
        }
        return List.copyOf(result);
    }

    private static FunctionSymbol gap(ElfSection text, long from, long to) {
        return new FunctionSymbol(".text+0x" + Long.toHexString(from - text.address()), from, to - from);
    }

    /** The bytes of {@code f}, as an offset into {@link #text()}. */
    public int offsetOf(FunctionSymbol f) {
        return Math.toIntExact(f.address() - textAddress);
    }
}
