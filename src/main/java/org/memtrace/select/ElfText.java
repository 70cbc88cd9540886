package org.memtrace.select;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The .text section of an x86-64 ELF file and the functions in it: just what the static analysis needs,
 * read from section headers and .symtab (or .dynsym when the file is stripped); see {@link #withGaps} for
 * code no symbol covers. Relocations are not
 * applied, so in a relocatable object RIP-relative targets stay unresolved.
 *
 * @param kind         "executable", "shared library" or "relocatable object"
 * @param fixedAddress the file is linked at fixed addresses (ET_EXEC): a displacement inside
 *                     {@code [imageStart, imageEnd)} is then the address of a static object
 */
public record ElfText(Path path, String kind, long textAddress, byte[] text, List<FunctionSymbol> functions,
                      boolean fixedAddress, long imageStart, long imageEnd) {

    private static final int ET_REL = 1, ET_EXEC = 2, ET_DYN = 3;
    private static final int EM_X86_64 = 62;
    private static final int SHT_NOBITS = 8, SHT_SYMTAB = 2, SHT_DYNSYM = 11;
    private static final int PT_LOAD = 1;
    private static final int STT_FUNC = 2, STT_GNU_IFUNC = 10;

    public static ElfText read(Path path) throws IOException, ElfFormatException {
        if (!Files.exists(path)) {
            throw new IOException(path + ": no such file");
        }
        if (!Files.isRegularFile(path)) {
            throw new IOException(path + ": not a regular file");
        }
        byte[] bytes = Files.readAllBytes(path);
        try {
            return parse(path, ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN));
        } catch (IndexOutOfBoundsException | IllegalArgumentException | ArithmeticException e) {
            throw new ElfFormatException(path + ": corrupt ELF file (a header points outside the file)");
        }
    }

    private record Section(String name, int type, long flags, long address, long offset, long size, int link, long entrySize) {
    }

    private static ElfText parse(Path path, ByteBuffer b) throws ElfFormatException {
        if (b.limit() < 64 || b.getInt(0) != 0x464C457F) {
            throw new ElfFormatException(path + ": not an ELF file");
        }
        if (b.get(4) != 2 || b.get(5) != 1 || Short.toUnsignedInt(b.getShort(18)) != EM_X86_64) {
            throw new ElfFormatException(path + ": not a little-endian 64-bit x86-64 ELF file");
        }
        int type = Short.toUnsignedInt(b.getShort(16));
        String kind = switch (type) {
            case ET_REL -> "relocatable object";
            case ET_EXEC -> "executable";
            case ET_DYN -> "shared library";
            default -> throw new ElfFormatException(path + ": ELF type " + type + " is not code memtrace can analyze");
        };
        List<Section> sections = sections(path, b);
        Section text = sections.stream().filter(s -> s.name.equals(".text")).findFirst()
                .orElseThrow(() -> new ElfFormatException(path + ": no .text section"));
        if (text.type == SHT_NOBITS) {
            throw new ElfFormatException(path + ": .text has no contents in the file");
        }
        if (text.offset < 0 || text.size < 0 || text.offset + text.size > b.limit()) {
            throw new ElfFormatException(path + ": corrupt ELF file (.text lies outside the file)");
        }
        byte[] code = new byte[checkedInt(path, text.size)];
        b.get(checkedInt(path, text.offset), code);
        int textIndex = sections.indexOf(text);

        List<FunctionSymbol> functions = withGaps(functions(b, sections, textIndex, type == ET_REL, text), text);
        long start = Long.MAX_VALUE, end = 0;
        if (type == ET_EXEC) {
            long phoff = b.getLong(32);
            int phentsize = Short.toUnsignedInt(b.getShort(54)), phnum = Short.toUnsignedInt(b.getShort(56));
            for (int i = 0; i < phnum; i++) {
                int p = checkedInt(path, phoff + (long) i * phentsize);
                if (b.getInt(p) == PT_LOAD) {
                    long vaddr = b.getLong(p + 16), memsz = b.getLong(p + 40);
                    start = Math.min(start, vaddr);
                    end = Math.max(end, vaddr + memsz);
                }
            }
        }
        boolean fixed = type == ET_EXEC && start < end;
        return new ElfText(path, kind, text.address, code, functions, fixed, fixed ? start : 0, fixed ? end : 0);
    }

    private static List<Section> sections(Path path, ByteBuffer b) throws ElfFormatException {
        long shoff = b.getLong(40);
        int shentsize = Short.toUnsignedInt(b.getShort(58));
        int shnum = Short.toUnsignedInt(b.getShort(60));
        int shstrndx = Short.toUnsignedInt(b.getShort(62));
        if (shoff == 0 || shnum == 0 || shentsize < 64 || shstrndx >= shnum) {
            throw new ElfFormatException(path + ": no section headers");
        }
        int namesHeader = checkedInt(path, shoff + (long) shstrndx * shentsize);
        long namesOffset = b.getLong(namesHeader + 24);
        var result = new ArrayList<Section>(shnum);
        for (int i = 0; i < shnum; i++) {
            int h = checkedInt(path, shoff + (long) i * shentsize);
            String name = string(b, namesOffset + Integer.toUnsignedLong(b.getInt(h)));
            result.add(new Section(name, b.getInt(h + 4), b.getLong(h + 8), b.getLong(h + 16), b.getLong(h + 24),
                    b.getLong(h + 32), b.getInt(h + 40), b.getLong(h + 56)));
        }
        return result;
    }

    /** Function symbols in .text, one per address (aliases collapse onto the first global name), sorted. */
    private static List<FunctionSymbol> functions(ByteBuffer b, List<Section> sections, int textIndex, boolean relocatable,
                                                  Section text) {
        Section table = sections.stream().filter(s -> s.type == SHT_SYMTAB).findFirst()
                .or(() -> sections.stream().filter(s -> s.type == SHT_DYNSYM).findFirst()).orElse(null);
        if (table == null || table.entrySize < 24 || table.link < 0 || table.link >= sections.size()) {
            return List.of();
        }
        long names = sections.get(table.link).offset;
        Map<Long, FunctionSymbol> byAddress = new LinkedHashMap<>();
        Map<Long, Boolean> global = new LinkedHashMap<>();
        for (long at = table.offset; at + 24 <= table.offset + table.size; at += table.entrySize) {
            int e = Math.toIntExact(at);
            int info = Byte.toUnsignedInt(b.get(e + 4));
            int symType = info & 0xF;
            int shndx = Short.toUnsignedInt(b.getShort(e + 6));
            long value = b.getLong(e + 8), size = b.getLong(e + 16);
            if ((symType != STT_FUNC && symType != STT_GNU_IFUNC) || shndx != textIndex || size <= 0) {
                continue;
            }
            long address = relocatable ? text.address + value : value;
            if (address < text.address || address + size > text.address + text.size) {
                continue;
            }
            boolean isGlobal = (info >>> 4) != 0;
            FunctionSymbol known = byAddress.get(address);
            if (known == null || (isGlobal && !global.get(address))) {
                byAddress.put(address, new FunctionSymbol(string(b, names + Integer.toUnsignedLong(b.getInt(e))), address, size));
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
    private static List<FunctionSymbol> withGaps(List<FunctionSymbol> symbols, Section text) {
        var result = new ArrayList<FunctionSymbol>(symbols.size() * 2 + 1);
        long cursor = text.address;
        for (FunctionSymbol f : symbols) {
            if (f.address() > cursor) {
                result.add(gap(text, cursor, f.address()));
            }
            result.add(f);
            cursor = Math.max(cursor, f.end());
        }
        if (cursor < text.address + text.size) {
            result.add(gap(text, cursor, text.address + text.size));
        }
        return List.copyOf(result);
    }

    private static FunctionSymbol gap(Section text, long from, long to) {
        return new FunctionSymbol(".text+0x" + Long.toHexString(from - text.address), from, to - from);
    }

    private static String string(ByteBuffer b, long offset) {
        int start = Math.toIntExact(offset);
        int end = start;
        while (b.get(end) != 0) {
            end++;
        }
        byte[] s = new byte[end - start];
        b.get(start, s);
        return new String(s, StandardCharsets.UTF_8);
    }

    private static int checkedInt(Path path, long value) throws ElfFormatException {
        if (value < 0 || value > Integer.MAX_VALUE) {
            throw new ElfFormatException(path + ": corrupt ELF file (offset " + value + ")");
        }
        return (int) value;
    }

    /** The bytes of {@code f}, as an offset into {@link #text()}. */
    public int offsetOf(FunctionSymbol f) {
        return Math.toIntExact(f.address() - textAddress);
    }
}
