package org.memtrace.symbols;

import static org.memtrace.symbols.Dwarf.*;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** One abbreviation: tag, children flag, attribute/form pairs, and the size of its attributes when fixed. */
record DwarfAbbrev(int tag, boolean hasChildren, int[] attributes, int[] forms, long[] implicitConstants, int fixedSize,
        boolean fixedLocation) {

    private static final int MAX_CODE = 1 << 20;

    static DwarfAbbrev[] table(ByteBuffer abbrev, long offset) throws DwarfException {
        if (offset < 0 || offset >= abbrev.limit()) throw new DwarfException("abbreviation table 0x" + Long.toHexString(offset) + " outside .debug_abbrev");
        DwarfCursor c = new DwarfCursor(abbrev);
        c.position = (int) offset;
        DwarfAbbrev[] table = new DwarfAbbrev[64];
        while (true) {
            long code = c.uleb();
            if (code == 0) return table;
            if (code >= MAX_CODE) throw new DwarfException("abbreviation code " + code);
            int tag = (int) Math.min(c.uleb(), Integer.MAX_VALUE);
            boolean children = c.u8() != 0;
            List<long[]> pairs = new ArrayList<>();
            while (true) {
                long at = c.uleb();
                long form = c.uleb();
                if (at == 0 && form == 0) break;
                if (form > 0xffff || at > 0xffff) throw new DwarfException("attribute 0x" + Long.toHexString(at) + " in form 0x" + Long.toHexString(form));
                long implicit = form == FORM_IMPLICIT_CONST ? c.sleb() : 0;
                pairs.add(new long[] {at, form, implicit});
            }
            int[] attributes = new int[pairs.size()];
            int[] forms = new int[pairs.size()];
            long[] implicits = new long[pairs.size()];
            int fixed = 0;
            boolean fixedLocation = false;
            for (int i = 0; i < pairs.size(); i++) {
                attributes[i] = (int) pairs.get(i)[0];
                forms[i] = (int) pairs.get(i)[1];
                implicits[i] = pairs.get(i)[2];
                int size = fixedSize(forms[i]);
                fixed = fixed < 0 || size < 0 ? -1 : fixed + size;
                // Only an expression can be DW_OP_addr; a location list (sec_offset, loclistx) is a local.
                fixedLocation |= tag == TAG_VARIABLE && attributes[i] == AT_LOCATION
                        && (forms[i] == FORM_EXPRLOC || forms[i] == FORM_BLOCK1 || forms[i] == FORM_BLOCK2 || forms[i] == FORM_BLOCK4 || forms[i] == FORM_BLOCK);
            }
            if (code >= table.length) table = Arrays.copyOf(table, (int) Math.max(code + 1, 2L * table.length));
            table[(int) code] = new DwarfAbbrev(tag, children, attributes, forms, implicits, fixed, fixedLocation);
        }
    }

    /** The size of a form in a unit of 8-byte addresses and 4-byte offsets (DWARF 3 and later); -1 when it varies. */
    static int fixedSize(int form) {
        return switch (form) {
            case FORM_FLAG_PRESENT, FORM_IMPLICIT_CONST -> 0;
            case FORM_DATA1, FORM_FLAG, FORM_REF1, FORM_STRX1, FORM_ADDRX1 -> 1;
            case FORM_DATA2, FORM_REF2, FORM_STRX2, FORM_ADDRX2 -> 2;
            case FORM_STRX3, FORM_ADDRX3 -> 3;
            case FORM_DATA4, FORM_REF4, FORM_STRP, FORM_LINE_STRP, FORM_SEC_OFFSET, FORM_REF_ADDR, FORM_STRP_SUP,
                 FORM_REF_SUP4, FORM_STRX4, FORM_ADDRX4, FORM_GNU_REF_ALT, FORM_GNU_STRP_ALT -> 4;
            case FORM_DATA8, FORM_REF8, FORM_ADDR, FORM_REF_SIG8, FORM_REF_SUP8 -> 8;
            case FORM_DATA16 -> 16;
            default -> -1;
        };
    }
}
