package org.memtrace.symbols;

import static org.memtrace.symbols.Dwarf.*;

/**
 * One attribute's value read by its form: the one place that knows how many bytes each DWARF form takes and
 * what kind of value it holds, so {@link DwarfTypes} and {@link DwarfInlines} cannot disagree on a form.
 * Reused for every attribute of a pass (a DIE walk reads millions of them; no object per attribute).
 */
final class DwarfForm {
    /** What {@link #value} is. */
    enum Kind {
        /** data, flag, sdata, udata, implicit_const: the value itself. */
        CONSTANT,
        /** addr: an address. */
        ADDRESS,
        /** addrx*: an index into .debug_addr. */
        INDEXED_ADDRESS,
        /** loclistx, rnglistx: an index into the unit's list offsets. */
        LIST_INDEX,
        /** sec_offset: an offset into another section. */
        SECTION_OFFSET,
        /** ref*: the DIE's offset in .debug_info. */
        REFERENCE,
        /** string: the offset in .debug_info of a string written in place. */
        INLINE_STRING,
        /** strp, line_strp: an offset into .debug_str or .debug_line_str ({@link #form} says which). */
        STRING_OFFSET,
        /** strx*: an index into .debug_str_offsets. */
        STRING_INDEX,
        /** exprloc, block*: {@link #value} bytes from {@link #blockStart}. */
        BLOCK,
        /** A form read past whose value no reader here uses (data16, supplementary-file strings and references, type signatures). */
        SKIPPED
    }

    Kind kind;
    long value;
    int blockStart;
    /** The form the value was read by: the attribute's, or the one a {@code DW_FORM_indirect} named. */
    int form;

    /** Reads the value of an attribute of form {@code f} at the cursor. */
    void read(DwarfCursor c, DwarfUnit u, int f, long implicit) throws DwarfException {
        form = f;
        blockStart = -1;
        switch (f) {
            case FORM_ADDR -> set(Kind.ADDRESS, u.addressSize() == 8 ? c.u64() : c.u32());
            case FORM_DATA1, FORM_FLAG -> set(Kind.CONSTANT, c.u8());
            case FORM_DATA2 -> set(Kind.CONSTANT, c.u16());
            case FORM_DATA4 -> set(Kind.CONSTANT, c.u32());
            case FORM_DATA8 -> set(Kind.CONSTANT, c.u64());
            case FORM_SDATA -> set(Kind.CONSTANT, c.sleb());
            case FORM_UDATA -> set(Kind.CONSTANT, c.uleb());
            case FORM_FLAG_PRESENT -> set(Kind.CONSTANT, 1);
            case FORM_IMPLICIT_CONST -> set(Kind.CONSTANT, implicit);
            case FORM_DATA16 -> { c.skip(16); set(Kind.SKIPPED, 0); }
            case FORM_STRING -> {
                int start = c.position;
                while (c.u8() != 0) { /* to the terminator */ }
                set(Kind.INLINE_STRING, start);
            }
            case FORM_STRP, FORM_LINE_STRP -> set(Kind.STRING_OFFSET, offset(c, u));
            case FORM_STRX, FORM_GNU_STR_INDEX -> set(Kind.STRING_INDEX, c.uleb());
            case FORM_STRX1 -> set(Kind.STRING_INDEX, c.u8());
            case FORM_STRX2 -> set(Kind.STRING_INDEX, c.u16());
            case FORM_STRX3 -> set(Kind.STRING_INDEX, c.u16() | ((long) c.u8() << 16));
            case FORM_STRX4 -> set(Kind.STRING_INDEX, c.u32());
            case FORM_STRP_SUP, FORM_GNU_STRP_ALT, FORM_GNU_REF_ALT -> set(Kind.SKIPPED, offset(c, u));
            case FORM_SEC_OFFSET -> set(Kind.SECTION_OFFSET, offset(c, u));
            case FORM_REF_ADDR -> set(Kind.REFERENCE, u.version() <= 2 ? (u.addressSize() == 8 ? c.u64() : c.u32()) : offset(c, u));
            case FORM_REF1 -> set(Kind.REFERENCE, u.start() + c.u8());
            case FORM_REF2 -> set(Kind.REFERENCE, u.start() + c.u16());
            case FORM_REF4 -> set(Kind.REFERENCE, u.start() + c.u32());
            case FORM_REF8 -> set(Kind.REFERENCE, u.start() + c.u64());
            case FORM_REF_UDATA -> set(Kind.REFERENCE, u.start() + c.uleb());
            // References into other files or type units: kept as unknown, so a variable keeps its plain name.
            case FORM_REF_SUP4 -> set(Kind.SKIPPED, c.u32());
            case FORM_REF_SUP8, FORM_REF_SIG8 -> set(Kind.SKIPPED, c.u64());
            case FORM_EXPRLOC, FORM_BLOCK -> block(c, c.uleb());
            case FORM_BLOCK1 -> block(c, c.u8());
            case FORM_BLOCK2 -> block(c, c.u16());
            case FORM_BLOCK4 -> block(c, c.u32());
            case FORM_ADDRX, FORM_GNU_ADDR_INDEX -> set(Kind.INDEXED_ADDRESS, c.uleb());
            case FORM_ADDRX1 -> set(Kind.INDEXED_ADDRESS, c.u8());
            case FORM_ADDRX2 -> set(Kind.INDEXED_ADDRESS, c.u16());
            case FORM_ADDRX3 -> set(Kind.INDEXED_ADDRESS, c.u16() | ((long) c.u8() << 16));
            case FORM_ADDRX4 -> set(Kind.INDEXED_ADDRESS, c.u32());
            case FORM_LOCLISTX, FORM_RNGLISTX -> set(Kind.LIST_INDEX, c.uleb());
            case FORM_INDIRECT -> {
                long actual = c.uleb();
                if (actual == FORM_INDIRECT || actual > 0xffff) throw new DwarfException("indirect form 0x" + Long.toHexString(actual));
                read(c, u, (int) actual, implicit);
            }
            default -> throw new DwarfException("unknown form 0x" + Integer.toHexString(f));
        }
    }

    /** Whether the value is a string, by any of the three ways a unit writes one. */
    boolean isString() {
        return kind == Kind.INLINE_STRING || kind == Kind.STRING_OFFSET || kind == Kind.STRING_INDEX;
    }

    private void set(Kind k, long v) {
        kind = k;
        value = v;
    }

    private void block(DwarfCursor c, long length) throws DwarfException {
        blockStart = c.position;
        c.skip(length);
        set(Kind.BLOCK, length);
    }

    private static long offset(DwarfCursor c, DwarfUnit u) throws DwarfException {
        return u.offset64() ? c.u64() : c.u32();
    }
}
