package org.memtrace.symbols;

import static org.memtrace.symbols.Dwarf.*;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The DIEs of a module's {@code .debug_info} as {@link DwarfTypes} reads them: the unit headers, one DIE's
 * attributes at a time (only those naming uses), and the index of variables at a fixed address. Apart from
 * the types so that the type model does not also carry the attribute encoding: forms, location expressions,
 * string offsets.
 *
 * <p>Not thread-safe (one attribute reader serves every DIE): {@link DwarfTypes} calls it under its lock.
 */
final class DwarfDies {
    static final DwarfDies NONE = new DwarfDies(null, List.of());

    private final DwarfSections sections;
    /** The attribute reader every DIE of this walk reuses. */
    private final DwarfForm formReader = new DwarfForm();
    private final List<DwarfUnit> units;
    private final long[] unitStarts;

    private DwarfDies(DwarfSections sections, List<DwarfUnit> units) {
        this.sections = sections;
        this.units = units;
        this.unitStarts = units.stream().mapToLong(DwarfUnit::start).toArray();
    }

    /** Reads every unit header of {@code s}'s {@code .debug_info}. */
    static DwarfDies read(DwarfSections s) throws DwarfException {
        List<DwarfUnit> units = new ArrayList<>();
        Map<Long, DwarfAbbrev[]> abbrevTables = new HashMap<>();
        DwarfCursor c = new DwarfCursor(s.info());
        while (c.position < c.limit) {
            units.add(DwarfUnit.read(c, s, abbrevTables));
            c.position = units.getLast().end();
        }
        return new DwarfDies(s, units);
    }

    /** Variables with a fixed address, sorted by address, and the .debug_info offset of each one's type DIE. */
    record Variables(long[] addresses, long[] typeOffsets) {}

    /** Walks every DIE once for the variables whose location is exactly {@code DW_OP_addr} and whose type is known. */
    Variables variables() throws DwarfException {
        long[] addresses = new long[256];
        long[] typeOffsets = new long[256];
        int n = 0;
        Die die = new Die();
        for (DwarfUnit u : units) {
            DwarfCursor uc = cursor(u, u.firstDie());
            uc.limit(u.end());
            while (uc.position < u.end()) {
                if (!readDie(uc, u, die, false) || die.tag != TAG_VARIABLE || die.location < 0) continue;
                long type = die.type;
                // A definition that completes an earlier declaration (DW_AT_specification) or an inlined
                // copy (abstract origin) carries its type on the DIE it refers to.
                long other = die.specification >= 0 ? die.specification : die.abstractOrigin;
                long location = die.location;
                if (type < 0 && other >= 0) {
                    Die referred = new Die();
                    DwarfUnit ou = unitOf(other);
                    readDie(cursor(ou, other), ou, referred, true);
                    type = referred.type;
                }
                if (type < 0) continue;
                if (n == addresses.length) {
                    addresses = Arrays.copyOf(addresses, 2 * n);
                    typeOffsets = Arrays.copyOf(typeOffsets, 2 * n);
                }
                addresses[n] = location;
                typeOffsets[n] = type;
                n++;
            }
        }
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) order[i] = i;
        final long[] a = addresses;
        Arrays.sort(order, (x, y) -> Long.compare(a[x], a[y]) != 0 ? Long.compare(a[x], a[y]) : Integer.compare(x, y));
        long[] sortedAddresses = new long[n];
        long[] sortedTypes = new long[n];
        int kept = 0;
        for (int i = 0; i < n; i++) {
            // Two variables at one address (aliases): the first in the file names it.
            if (kept > 0 && sortedAddresses[kept - 1] == addresses[order[i]]) continue;
            sortedAddresses[kept] = addresses[order[i]];
            sortedTypes[kept] = typeOffsets[order[i]];
            kept++;
        }
        return new Variables(Arrays.copyOf(sortedAddresses, kept), Arrays.copyOf(sortedTypes, kept));
    }

    DwarfUnit unitOf(long offset) throws DwarfException {
        int i = Arrays.binarySearch(unitStarts, offset);
        if (i < 0) i = -i - 2;
        if (i < 0 || offset < units.get(i).firstDie() || offset >= units.get(i).end()) {
            throw new DwarfException("reference 0x" + Long.toHexString(offset) + " is in no unit's DIEs");
        }
        return units.get(i);
    }

    DwarfCursor cursor(DwarfUnit u, long offset) {
        DwarfCursor c = new DwarfCursor(sections.info());
        c.position = (int) offset;
        c.limit(u.end());
        return c;
    }

    /** The attributes of one DIE that naming uses; -1 (null for the name) when absent. */
    static final class Die {
        int tag;
        boolean hasChildren;
        String name;
        long byteSize;
        long bitOffset;
        long bitSize;
        long dataBitOffset;
        long memberLocation;
        long upperBound;
        long lowerBound;
        long count;
        long type;
        long specification;
        long abstractOrigin;
        long location;
        boolean declaration;

        void clear() {
            name = null;
            byteSize = bitOffset = bitSize = dataBitOffset = memberLocation = -1;
            upperBound = lowerBound = count = type = specification = abstractOrigin = location = -1;
            declaration = false;
        }
    }

    interface ChildAction {
        void run() throws DwarfException;
    }

    /** Reads the direct children of the DIE just read, skipping grandchildren, calling {@code action} on each. */
    void forEachChild(DwarfCursor c, DwarfUnit u, Die die, ChildAction action) throws DwarfException {
        int depth = 1;
        while (depth > 0) {
            if (!readDie(c, u, die, depth == 1)) {
                depth--;
                continue;
            }
            if (depth == 1) action.run();
            if (die.hasChildren) depth++;
        }
    }

    /**
     * Reads the DIE at the cursor into {@code die}; false for the null entry that ends a list of children.
     * Strings are decoded only when {@code names}: the index never needs them.
     */
    boolean readDie(DwarfCursor c, DwarfUnit u, Die die, boolean names) throws DwarfException {
        long code = c.uleb();
        if (code == 0) return false;
        DwarfAbbrev a = u.abbrev(code, c.position);
        die.tag = a.tag();
        die.hasChildren = a.hasChildren();
        die.clear();
        boolean wanted = names || a.fixedLocation();
        int size = u.fixedSize(a);
        if (!wanted && size >= 0) {
            c.skip(size);
            return true;
        }
        for (int i = 0; i < a.attributes().length; i++) {
            attribute(c, u, die, a.attributes()[i], a.forms()[i], a.implicitConstants()[i], names);
        }
        return true;
    }

    private void attribute(DwarfCursor c, DwarfUnit u, Die die, int at, int form, long implicit, boolean names) throws DwarfException {
        DwarfForm f = formReader;
        f.read(c, u, form, implicit);
        form = f.form;
        long value = f.value;
        int blockStart = f.blockStart;
        boolean reference = f.kind == DwarfForm.Kind.REFERENCE;
        switch (f.kind) {
            case SKIPPED -> { return; }
            case INLINE_STRING -> {
                if (at == AT_NAME && names) die.name = DwarfCursor.stringAt(sections.info(), value, ".debug_info");
                return;
            }
            case STRING_OFFSET -> {
                if (at == AT_NAME && names) {
                    die.name = DwarfCursor.stringAt(form == FORM_STRP ? sections.str() : sections.lineStr(), value,
                            form == FORM_STRP ? ".debug_str" : ".debug_line_str");
                }
                return;
            }
            case STRING_INDEX -> {
                if (at == AT_NAME && names) die.name = sections.indexedString(u, value);
                return;
            }
            default -> { }
        }
        switch (at) {
            case AT_TYPE -> die.type = reference ? value : -1;
            case AT_SPECIFICATION -> die.specification = reference ? value : -1;
            case AT_ABSTRACT_ORIGIN -> die.abstractOrigin = reference ? value : -1;
            case AT_BYTE_SIZE -> die.byteSize = constant(form, value);
            case AT_BIT_SIZE -> die.bitSize = constant(form, value);
            case AT_BIT_OFFSET -> die.bitOffset = constant(form, value);
            case AT_DATA_BIT_OFFSET -> die.dataBitOffset = constant(form, value);
            case AT_UPPER_BOUND -> die.upperBound = constant(form, value);
            case AT_COUNT -> die.count = constant(form, value);
            case AT_LOWER_BOUND -> die.lowerBound = constant(form, value);
            case AT_DATA_MEMBER_LOCATION -> die.memberLocation = blockStart >= 0
                    ? plusUconst(blockStart, (int) value) : constant(form, value);
            case AT_LOCATION -> die.location = blockStart >= 0 ? fixedAddress(blockStart, (int) value, u) : -1;
            case AT_DECLARATION -> die.declaration = value != 0;
            default -> { }
        }
    }

    /**
     * A constant attribute, or -1 when it is not one (a reference: a VLA bound) or is negative or huge (gcc
     * writes the upper bound of a zero-length array as -1).
     */
    private static long constant(int form, long value) {
        boolean isConstant = switch (form) {
            case FORM_DATA1, FORM_DATA2, FORM_DATA4, FORM_DATA8, FORM_SDATA, FORM_UDATA, FORM_IMPLICIT_CONST -> true;
            default -> false;
        };
        if (!isConstant) return -1;
        return value < 0 || value > (1L << 48) ? -1 : value;
    }

    /** A DWARF 2 member location, {@code DW_OP_plus_uconst n}; -1 for any other expression. */
    private long plusUconst(int start, int length) throws DwarfException {
        if (length < 2 || sections.info().get(start) != OP_PLUS_UCONST) return -1;
        DwarfCursor c = new DwarfCursor(sections.info());
        c.position = start + 1;
        c.limit(start + length);
        long n = c.uleb();
        return c.position == start + length ? n : -1;
    }

    /** The address of a location that is exactly {@code DW_OP_addr a} (a global or static); -1 otherwise (TLS, registers, lists). */
    private long fixedAddress(int start, int length, DwarfUnit u) throws DwarfException {
        if (length != 1 + u.addressSize() || sections.info().get(start) != OP_ADDR) return -1;
        DwarfCursor c = new DwarfCursor(sections.info());
        c.position = start + 1;
        return u.addressSize() == 8 ? c.u64() : c.u32();
    }
}
