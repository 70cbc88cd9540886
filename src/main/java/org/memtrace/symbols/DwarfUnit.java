package org.memtrace.symbols;

import static org.memtrace.symbols.Dwarf.AT_STR_OFFSETS_BASE;
import static org.memtrace.symbols.Dwarf.FORM_SEC_OFFSET;

import java.util.Map;

/** A unit header: where its DIEs are, how wide its addresses and offsets, which abbreviations it uses. */
record DwarfUnit(long start, int firstDie, int end, int version, int addressSize, boolean offset64,
        DwarfAbbrev[] abbrevs, long strOffsetsBase) {

    static DwarfUnit read(DwarfCursor c, DwarfSections s, Map<Long, DwarfAbbrev[]> tables) throws DwarfException {
        int start = c.position;
        long length = c.u32();
        boolean offset64 = false;
        if (length == 0xffffffffL) {
            offset64 = true;
            length = c.u64();
        } else if (length >= 0xfffffff0L) {
            throw new DwarfException("unit at 0x" + Integer.toHexString(start) + " has reserved length 0x" + Long.toHexString(length));
        }
        int end = c.end(length, "unit at 0x" + Integer.toHexString(start));
        c.limit(end);
        int version = c.u16();
        if (version < 2 || version > 5) throw new DwarfException("unit at 0x" + Integer.toHexString(start) + " has version " + version);
        int addressSize;
        long abbrevOffset;
        if (version >= 5) {
            int unitType = c.u8();
            addressSize = c.u8();
            abbrevOffset = offset64 ? c.u64() : c.u32();
            switch (unitType) {
                case 1, 3 -> { }
                case 4, 5 -> c.u64();
                case 2, 6 -> { c.u64(); if (offset64) c.u64(); else c.u32(); }
                default -> throw new DwarfException("unit at 0x" + Integer.toHexString(start) + " has unit type " + unitType);
            }
        } else {
            abbrevOffset = offset64 ? c.u64() : c.u32();
            addressSize = c.u8();
        }
        if (addressSize != 4 && addressSize != 8) throw new DwarfException("unit at 0x" + Integer.toHexString(start) + " has " + addressSize + "-byte addresses");
        DwarfAbbrev[] abbrevs = tables.get(abbrevOffset);
        if (abbrevs == null) {
            abbrevs = DwarfAbbrev.table(s.abbrev(), abbrevOffset);
            tables.put(abbrevOffset, abbrevs);
        }
        int firstDie = c.position;
        long strOffsetsBase = strOffsetsBase(c, abbrevs, end);
        c.restoreLimit();
        return new DwarfUnit(start, firstDie, end, version, addressSize, offset64, abbrevs, strOffsetsBase);
    }

    /** The abbreviation of the DIE whose code {@code code} ends at {@code position}; a code the unit's table lacks is a flaw. */
    DwarfAbbrev abbrev(long code, int position) throws DwarfException {
        DwarfAbbrev a = code < abbrevs.length ? abbrevs[(int) code] : null;
        if (a == null) throw new DwarfException("DIE at 0x" + Integer.toHexString(position) + " uses undefined abbreviation " + code);
        return a;
    }

    /**
     * The bytes of every DIE of abbreviation {@code a} in this unit, when they are the same for each; else -1.
     * {@link DwarfAbbrev#fixedSize} counts 8-byte addresses and 4-byte offsets, and DWARF 2's ref_addr is as
     * wide as an address: other units' DIEs are read attribute by attribute.
     */
    int fixedSize(DwarfAbbrev a) {
        return addressSize == 8 && !offset64 && version >= 3 ? a.fixedSize() : -1;
    }

    /** DW_AT_str_offsets_base of the unit DIE, read by skipping its other attributes; -1 when absent. */
    private static long strOffsetsBase(DwarfCursor c, DwarfAbbrev[] abbrevs, int end) throws DwarfException {
        if (c.position >= end) return -1;
        long code = c.uleb();
        if (code <= 0 || code >= abbrevs.length || abbrevs[(int) code] == null) return -1;
        DwarfAbbrev a = abbrevs[(int) code];
        for (int i = 0; i < a.attributes().length; i++) {
            if (a.attributes()[i] == AT_STR_OFFSETS_BASE && a.forms()[i] == FORM_SEC_OFFSET) return c.u32();
            int size = DwarfAbbrev.fixedSize(a.forms()[i]);
            if (size < 0) return -1;
            c.skip(size);
        }
        return -1;
    }
}
