package org.memtrace.symbols;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * An ELF64 little-endian file, parsed into immutable tables (eagerly, but for {@link #readSections}). Every offset and count read from the
 * file is checked against the file's size before use, so a corrupt or truncated file ends in an
 * {@link ElfFormatException} and never in an index error.
 */
public final class ElfFile {

    public static final int ET_REL = 1;
    public static final int ET_EXEC = 2;
    public static final int ET_DYN = 3;
    private static final int EM_X86_64 = 62;
    private static final int NT_GNU_BUILD_ID = 3;
    private static final int R_X86_64_COPY = 5;
    private static final int R_X86_64_GLOB_DAT = 6;
    private static final int R_X86_64_JUMP_SLOT = 7;
    private static final int ELFCOMPRESS_ZLIB = 1;

    private final Path path;
    private final ByteBuffer bytes;
    private final int type;
    private final List<ElfSegment> segments;
    private final List<ElfSection> sections;
    /** Null until first wanted when the file was read by {@link #readSections}. */
    private Symbols symbols;
    private final byte[] buildId;
    private final String debugLink;

    /** The symbol tables and the relocations against .dynsym, parsed together. */
    private record Symbols(List<ElfSymbol> symtab, List<ElfSymbol> dynsym, List<CopyRelocation> copyRelocations,
                           List<String> pltSlots, Map<Long, String> gotSlots) {}

    private ElfFile(Path path, ByteBuffer bytes, boolean withSymbols) throws ElfFormatException {
        this.path = path;
        this.bytes = bytes.order(ByteOrder.LITTLE_ENDIAN);
        checkIdent();
        type = u16(16);
        int machine = u16(18);
        if (machine != EM_X86_64) throw fail("machine " + machine + " is not x86-64");
        segments = readSegments();
        sections = readSections();
        if (withSymbols) symbols = readSymbols();
        buildId = readBuildId();
        debugLink = readDebugLink();
    }

    /** Maps and parses the file; the mapping stays valid (and shared) for {@link #bytesAt}. */
    public static ElfFile read(Path path) throws IOException {
        return map(path, true);
    }

    /**
     * As {@link #read}, but the symbol tables and relocations are parsed when first asked for, and a damaged
     * one then fails as an {@link UncheckedIOException}: for a reader that needs only sections and the
     * build-id (the .mtr reader, per loaded module), to whom libc's 3,000 symbols cost more than its trace.
     */
    public static ElfFile readSections(Path path) throws IOException {
        return map(path, false);
    }

    private static ElfFile map(Path path, boolean withSymbols) throws IOException {
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = channel.size();
            if (size > Integer.MAX_VALUE) throw new ElfFormatException(path + ": too large (" + size + " bytes)");
            return new ElfFile(path, channel.map(FileChannel.MapMode.READ_ONLY, 0, size), withSymbols);
        }
    }

    /** Parses an in-memory image; {@code name} only labels error messages. */
    public static ElfFile parse(String name, byte[] image) throws ElfFormatException {
        return new ElfFile(Path.of(name), ByteBuffer.wrap(image), true);
    }

    public Path path() { return path; }

    public int type() { return type; }

    public List<ElfSegment> segments() { return segments; }

    public List<ElfSection> sections() { return sections; }

    public List<ElfSymbol> symtab() { return symbols().symtab(); }

    public List<ElfSymbol> dynsym() { return symbols().dynsym(); }

    public List<CopyRelocation> copyRelocations() { return symbols().copyRelocations(); }

    /** The functions the PLT jumps to, in the order of .rela.plt, which is the order of the PLT's entries. */
    public List<String> pltSlots() { return symbols().pltSlots(); }

    /**
     * The GOT slots that hold a symbol's address, filled by the dynamic linker (GLOB_DAT and JUMP_SLOT
     * relocations), by slot address: what a {@code .plt.got} entry's {@code jmp *slot(%rip)} calls.
     */
    public Map<Long, String> gotSlots() { return symbols().gotSlots(); }

    private Symbols symbols() {
        if (symbols == null) {
            try {
                symbols = readSymbols();
            } catch (ElfFormatException e) {
                throw new UncheckedIOException(e);
            }
        }
        return symbols;
    }

    private Symbols readSymbols() throws ElfFormatException {
        List<ElfSymbol> dynsym = readSymbols(ElfSection.SHT_DYNSYM);
        List<CopyRelocation> jumpSlots = readDynamicRelocations(R_X86_64_JUMP_SLOT, dynsym);
        Map<Long, String> got = new HashMap<>();
        for (CopyRelocation r : readDynamicRelocations(R_X86_64_GLOB_DAT, dynsym)) got.put(r.address(), r.name());
        for (CopyRelocation r : jumpSlots) got.put(r.address(), r.name());
        return new Symbols(readSymbols(ElfSection.SHT_SYMTAB), dynsym, readDynamicRelocations(R_X86_64_COPY, dynsym),
                jumpSlots.stream().map(CopyRelocation::name).toList(), Map.copyOf(got));
    }

    public Optional<byte[]> buildId() { return Optional.ofNullable(buildId).map(byte[]::clone); }

    public Optional<String> buildIdHex() { return Optional.ofNullable(buildId).map(HexFormat.of()::formatHex); }

    /** The file name in .gnu_debuglink, where a distribution keeps this file's separate debug symbols. */
    public Optional<String> debugLink() { return Optional.ofNullable(debugLink); }

    public Optional<ElfSection> section(String name) {
        return sections.stream().filter(s -> s.name().equals(name)).findFirst();
    }

    /** A copy of the section's bytes in the file; empty for a NOBITS section. */
    public byte[] contents(ElfSection section) throws ElfFormatException {
        checkRange(section.offset(), section.fileSize(), section.name());
        byte[] b = new byte[(int) section.fileSize()];
        bytes.get((int) section.offset(), b);
        return b;
    }

    /**
     * A section's contents as the program that wrote it meant them: a read-only view of the file, or for an
     * SHF_COMPRESSED section its inflated bytes (zlib only; zstd is refused). Empty for a NOBITS section.
     */
    public ByteBuffer contentsOf(ElfSection section) throws ElfFormatException {
        checkRange(section.offset(), section.fileSize(), section.name());
        ByteBuffer stored = bytes.slice((int) section.offset(), (int) section.fileSize()).order(ByteOrder.LITTLE_ENDIAN);
        if (!section.isCompressed() || section.fileSize() == 0) return stored.asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
        if (stored.capacity() < 24) throw fail(section.name() + ": compressed section shorter than its header");
        long kind = stored.getInt(0) & 0xffffffffL;
        long size = stored.getLong(8);
        if (kind != ELFCOMPRESS_ZLIB) throw fail(section.name() + ": compression type " + kind + " is not zlib");
        // Deflate expands at most about 1032 times: a larger claim is a corrupt header, not a reason to allocate it.
        long most = Math.min(Integer.MAX_VALUE - 8, (stored.capacity() - 24L) * 1032 + 64);
        if (size < 0 || size > most) throw fail(section.name() + ": inflated size " + size + " out of range");
        byte[] out = new byte[(int) size];
        Inflater inflater = new Inflater();
        try {
            inflater.setInput(stored.slice(24, stored.capacity() - 24));
            int n = 0;
            while (n < out.length && !inflater.finished()) {
                int got = inflater.inflate(out, n, out.length - n);
                // No progress with input left means a dictionary or more input is wanted: the stream is cut.
                if (got == 0 && (inflater.needsInput() || inflater.needsDictionary())) break;
                n += got;
            }
            if (n != out.length) throw fail(section.name() + ": inflated " + n + " of " + size + " bytes");
        } catch (DataFormatException e) {
            throw fail(section.name() + ": corrupt zlib data (" + e.getMessage() + ")");
        } finally {
            inflater.end();
        }
        return ByteBuffer.wrap(out).asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
    }

    public List<ElfSegment> loadSegments() {
        return segments.stream().filter(ElfSegment::isLoad).toList();
    }

    /**
     * The file's bytes that a PT_LOAD maps at virtual address {@code vaddr}, up to {@code max} bytes and the
     * end of that segment's file-backed part; empty when no segment backs the address with file contents.
     */
    public ByteBuffer bytesAt(long vaddr, int max) {
        for (ElfSegment s : segments) {
            if (!s.isLoad()) continue;
            long delta = vaddr - s.vaddr();
            if (delta < 0 || delta >= s.fileSize()) continue;
            long start = s.offset() + delta;
            long end = Math.min(Math.min(s.offset() + s.fileSize(), start + Math.max(0, max)), bytes.capacity());
            if (start >= end) break;
            return bytes.slice((int) start, (int) (end - start)).asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
        }
        return ByteBuffer.allocate(0);
    }

    private void checkIdent() throws ElfFormatException {
        // Magic first, so that a short text file is called what it is rather than a truncated ELF file.
        if (bytes.capacity() < 4 || u8(0) != 0x7f || u8(1) != 'E' || u8(2) != 'L' || u8(3) != 'F') {
            throw fail("not an ELF file (bad magic)");
        }
        if (bytes.capacity() < 64) throw fail("truncated: " + bytes.capacity() + " bytes, shorter than an ELF64 header");
        if (u8(4) != 2) throw fail("not ELF64 (class " + u8(4) + ")");
        if (u8(5) != 1) throw fail("not little-endian (data " + u8(5) + ")");
    }

    private List<ElfSegment> readSegments() throws ElfFormatException {
        long phoff = u64(32);
        int entsize = u16(54);
        int count = u16(56);
        if (count == 0) return List.of();
        if (entsize < 56) throw fail("program header entry size " + entsize + " < 56");
        checkRange(phoff, (long) entsize * count, "program headers");
        List<ElfSegment> list = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            long o = phoff + (long) i * entsize;
            ElfSegment segment = new ElfSegment((int) u32(o), (int) u32(o + 4), u64(o + 8), u64(o + 16), u64(o + 32), u64(o + 40));
            checkRange(segment.offset(), segment.fileSize(), "segment " + i);
            list.add(segment);
        }
        return List.copyOf(list);
    }

    private List<ElfSection> readSections() throws ElfFormatException {
        long shoff = u64(40);
        int entsize = u16(58);
        long count = u16(60);
        int strndx = u16(62);
        if (shoff == 0) return List.of();
        if (entsize < 64) throw fail("section header entry size " + entsize + " < 64");
        checkRange(shoff, entsize, "section header 0");
        // Files with 0xff00 sections or more keep the real count and string table index in section 0.
        if (count == 0) count = u64(shoff + 32);
        if (strndx == 0xffff) strndx = (int) u32(shoff + 40);
        if (count > bytes.capacity() / entsize) throw fail("section count " + count + " exceeds the file");
        checkRange(shoff, entsize * count, "section headers");
        long[][] raw = new long[(int) count][];
        for (int i = 0; i < count; i++) {
            long o = shoff + (long) i * entsize;
            raw[i] = new long[] {u32(o), u32(o + 4), u64(o + 8), u64(o + 16), u64(o + 24), u64(o + 32),
                    u32(o + 40), u32(o + 44), u64(o + 56)};
        }
        if (strndx >= count) throw fail("section name table index " + strndx + " out of " + count);
        long[] names = raw[strndx];
        checkRange(names[4], names[5], "section name table");
        List<ElfSection> list = new ArrayList<>((int) count);
        for (long[] r : raw) {
            if (r[0] >= names[5]) throw fail("section name offset " + r[0] + " outside its table");
            String name = cString(names[4] + r[0], names[4] + names[5]);
            list.add(new ElfSection(name, (int) r[1], r[2], r[3], r[4], r[5], (int) r[6], (int) r[7], r[8]));
        }
        return List.copyOf(list);
    }

    private List<ElfSymbol> readSymbols(int sectionType) throws ElfFormatException {
        for (ElfSection s : sections) {
            if (s.type() == sectionType) return readSymbols(s);
        }
        return List.of();
    }

    private List<ElfSymbol> readSymbols(ElfSection table) throws ElfFormatException {
        if (table.fileSize() == 0) return List.of();
        if (table.entrySize() != 24) throw fail(table.name() + ": symbol entry size " + table.entrySize() + " != 24");
        checkRange(table.offset(), table.size(), table.name());
        ElfSection strings = linked(table);
        checkRange(strings.offset(), strings.fileSize(), table.name() + " string table");
        long end = strings.offset() + strings.fileSize();
        int count = (int) (table.size() / 24);
        List<ElfSymbol> list = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            long o = table.offset() + 24L * i;
            long nameOffset = u32(o);
            if (nameOffset >= strings.fileSize() && nameOffset != 0) {
                throw fail(table.name() + ": symbol " + i + " name offset " + nameOffset + " outside its string table");
            }
            String stored = strings.fileSize() == 0 ? "" : cString(strings.offset() + nameOffset, end);
            // Versioned names reach .symtab as name@VERSION or name@@VERSION; the program calls the object name.
            int at = stored.indexOf('@');
            String name = at > 0 ? stored.substring(0, at) : stored;
            String version = at > 0 ? stored.substring(at) : "";
            int info = u8(o + 4);
            list.add(new ElfSymbol(name, version, u64(o + 8), u64(o + 16), info & 0xf, info >>> 4, u16(o + 6)));
        }
        return List.copyOf(list);
    }

    /** Relocations of one type against .dynsym, as (place, symbol name, symbol size). */
    private List<CopyRelocation> readDynamicRelocations(int relocationType, List<ElfSymbol> dynsym) throws ElfFormatException {
        List<CopyRelocation> list = new ArrayList<>();
        for (ElfSection s : sections) {
            if (s.type() != ElfSection.SHT_RELA || s.fileSize() == 0) continue;
            if (s.link() <= 0 || s.link() >= sections.size() || sections.get(s.link()).type() != ElfSection.SHT_DYNSYM) continue;
            if (s.entrySize() != 24) throw fail(s.name() + ": relocation entry size " + s.entrySize() + " != 24");
            checkRange(s.offset(), s.size(), s.name());
            for (long o = s.offset(); o + 24 <= s.offset() + s.size(); o += 24) {
                long info = u64(o + 8);
                if ((info & 0xffffffffL) != relocationType) continue;
                long index = info >>> 32;
                if (index >= dynsym.size()) throw fail(s.name() + ": relocation of symbol " + index + " out of " + dynsym.size());
                ElfSymbol symbol = dynsym.get((int) index);
                list.add(new CopyRelocation(u64(o), symbol.name(), symbol.size()));
            }
        }
        return List.copyOf(list);
    }

    private byte[] readBuildId() throws ElfFormatException {
        for (ElfSection s : sections) {
            if (s.type() == ElfSection.SHT_NOTE && s.fileSize() > 0) {
                byte[] id = buildIdIn(s.offset(), s.size());
                if (id != null) return id;
            }
        }
        if (!sections.isEmpty()) return null;
        for (ElfSegment p : segments) {
            if (p.type() == ElfSegment.PT_NOTE) {
                byte[] id = buildIdIn(p.offset(), p.fileSize());
                if (id != null) return id;
            }
        }
        return null;
    }

    private byte[] buildIdIn(long offset, long size) throws ElfFormatException {
        checkRange(offset, size, "note");
        long o = offset;
        long end = offset + size;
        while (o + 12 <= end) {
            long nameSize = u32(o);
            long descSize = u32(o + 4);
            long noteType = u32(o + 8);
            long name = o + 12;
            long desc = name + align4(nameSize);
            long next = desc + align4(descSize);
            if (next > end || next <= o) throw fail("note at " + o + " overruns its section");
            if (noteType == NT_GNU_BUILD_ID && nameSize == 4 && u8(name) == 'G' && u8(name + 1) == 'N' && u8(name + 2) == 'U') {
                byte[] id = new byte[(int) descSize];
                bytes.get((int) desc, id);
                return id;
            }
            o = next;
        }
        return null;
    }

    private String readDebugLink() throws ElfFormatException {
        for (ElfSection s : sections) {
            if (s.name().equals(".gnu_debuglink") && s.fileSize() > 0) {
                checkRange(s.offset(), s.size(), s.name());
                String name = cString(s.offset(), s.offset() + s.size());
                return name.isEmpty() ? null : name;
            }
        }
        return null;
    }

    private ElfSection linked(ElfSection table) throws ElfFormatException {
        if (table.link() <= 0 || table.link() >= sections.size()) {
            throw fail(table.name() + ": string table index " + table.link() + " out of " + sections.size());
        }
        return sections.get(table.link());
    }

    private static long align4(long n) {
        return (n + 3) & ~3L;
    }

    private String cString(long start, long limit) throws ElfFormatException {
        long end = start;
        while (end < limit && bytes.get((int) end) != 0) end++;
        if (end >= limit) throw fail("unterminated string at offset " + start);
        byte[] b = new byte[(int) (end - start)];
        bytes.get((int) start, b);
        return new String(b, StandardCharsets.UTF_8);
    }

    private void checkRange(long offset, long length, String what) throws ElfFormatException {
        if (offset < 0 || length < 0 || offset > bytes.capacity() || length > bytes.capacity() - offset) {
            throw fail(what + " at offset " + offset + " length " + length + " lies outside the file (" + bytes.capacity() + " bytes)");
        }
    }

    private int u8(long offset) throws ElfFormatException {
        checkRange(offset, 1, "byte");
        return bytes.get((int) offset) & 0xff;
    }

    private int u16(long offset) throws ElfFormatException {
        checkRange(offset, 2, "half-word");
        return bytes.getShort((int) offset) & 0xffff;
    }

    private long u32(long offset) throws ElfFormatException {
        checkRange(offset, 4, "word");
        return bytes.getInt((int) offset) & 0xffffffffL;
    }

    private long u64(long offset) throws ElfFormatException {
        checkRange(offset, 8, "double word");
        return bytes.getLong((int) offset);
    }

    private ElfFormatException fail(String what) {
        return new ElfFormatException(path + ": " + what);
    }
}
