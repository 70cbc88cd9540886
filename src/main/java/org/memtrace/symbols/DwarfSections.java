package org.memtrace.symbols;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Optional;

/** The DWARF sections the {@code .debug_info} readers read, little-endian views of their own. */
record DwarfSections(ByteBuffer info, ByteBuffer abbrev, ByteBuffer str, ByteBuffer lineStr, ByteBuffer strOffsets, ByteBuffer addr) {
    DwarfSections {
        info = info.slice().order(ByteOrder.LITTLE_ENDIAN);
        abbrev = abbrev.slice().order(ByteOrder.LITTLE_ENDIAN);
        str = str.slice();
        lineStr = lineStr.slice();
        strOffsets = strOffsets.slice().order(ByteOrder.LITTLE_ENDIAN);
        addr = addr.slice().order(ByteOrder.LITTLE_ENDIAN);
    }

    /** The sections of {@code elf}; one it lacks is empty. */
    static DwarfSections read(ElfFile elf) throws ElfFormatException {
        return new DwarfSections(contents(elf, ".debug_info"), contents(elf, ".debug_abbrev"), contents(elf, ".debug_str"),
                contents(elf, ".debug_line_str"), contents(elf, ".debug_str_offsets"), contents(elf, ".debug_addr"));
    }

    /** The contents of {@code elf}'s section {@code name}; empty when it has none. */
    static ByteBuffer contents(ElfFile elf, String name) throws ElfFormatException {
        Optional<ElfSection> s = elf.section(name);
        return s.isPresent() ? elf.contentsOf(s.get()) : ByteBuffer.allocate(0);
    }

    /** The {@code .debug_str} string at entry {@code index} of unit {@code u}'s {@code .debug_str_offsets} (DW_FORM_strx). */
    String indexedString(DwarfUnit u, long index) throws DwarfException {
        int entry = u.offset64() ? 8 : 4;
        // 8: gcc's single-unit files give no DW_AT_str_offsets_base; the table's header is 8 bytes
        long base = u.strOffsetsBase() >= 0 ? u.strOffsetsBase() : 8;
        long at = base + index * entry;
        if (index < 0 || at < 0 || at + entry > strOffsets.limit()) throw new DwarfException("string index " + index + " outside .debug_str_offsets");
        long offset = u.offset64() ? strOffsets.getLong((int) at) : strOffsets.getInt((int) at) & 0xffffffffL;
        return DwarfCursor.stringAt(str, offset, ".debug_str");
    }
}
