package org.memtrace.symbols;

import static org.memtrace.symbols.Dwarf.*;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.memtrace.symbols.DwarfDies.Die;

/**
 * The types of a module's global and static variables, from its DWARF {@code .debug_info} and
 * {@code .debug_abbrev} (versions 2 to 5 as gcc writes them, 32- and 64-bit units), so that an address inside
 * a variable can be named down to the field and index: {@code table[3].value+0}, {@code grid[2][5]+4}.
 *
 * <p>Lazy: {@link #read} walks every DIE once but keeps only variables whose location is a fixed address
 * ({@code DW_OP_addr}); a type is decoded when a name first needs it, and remembered. Every read is checked
 * against its section; any flaw (a cut section, an unknown form or abbreviation, a reference outside the
 * section) makes the whole module fall back to plain {@code symbol+offset} names with {@link #problem} saying
 * why, because a half-read index would give some variables fields and silently not others. A flaw found only
 * when a type is decoded later drops the field names of that one variable.
 *
 * <p>Not read: type units ({@code -fdebug-types-section}, {@code DW_FORM_ref_sig8}), supplementary files
 * ({@code dwz}), split DWARF ({@code .dwo}), location lists (a variable that moves is not a global), and
 * variable-length arrays. Those variables keep their plain names.
 */
public final class DwarfTypes {

    /** Type chains longer than this (typedefs of typedefs, nesting) are taken as corrupt: no cycle can hang a lookup. */
    private static final int MAX_DEPTH = 64;
    private static final DwarfTypes NONE = new DwarfTypes(DwarfDies.NONE, new long[0], new long[0], null);

    private final DwarfDies dies;
    /** Variables with a fixed address, sorted by address, and the .debug_info offset of each one's type DIE. */
    private final long[] addresses;
    private final long[] typeOffsets;
    private final String problem;
    private final Map<Long, Type> types = new HashMap<>();
    /** By variable, as {@link #addresses}: how {@link #path} names it, null until it first does. */
    private final Layout[] layouts;

    private DwarfTypes(DwarfDies dies, long[] addresses, long[] typeOffsets, String problem) {
        this.dies = dies;
        this.addresses = addresses;
        this.typeOffsets = typeOffsets;
        this.problem = problem;
        this.layouts = new Layout[addresses.length];
    }

    /** No types: a module without {@code .debug_info}, or one whose debug information could not be read. */
    public static DwarfTypes none(String why) {
        return why == null ? NONE : new DwarfTypes(DwarfDies.NONE, new long[0], new long[0], why);
    }

    /** Indexes the variables of {@code elf}'s {@code .debug_info}; never throws. */
    public static DwarfTypes read(ElfFile elf) {
        Optional<ElfSection> info = elf.section(".debug_info");
        if (info.isEmpty() || info.get().fileSize() == 0) return none(elf.path() + " has no .debug_info");
        try {
            return index(DwarfSections.read(elf));
        } catch (ElfFormatException e) {
            return none(e.getMessage());
        } catch (DwarfException e) {
            return none(elf.path() + ": .debug_info: " + e.getMessage());
        } catch (RuntimeException e) {
            // Every read is checked; this is the net under a mistake of the reader's own, not an expected path.
            return none(elf.path() + ": .debug_info: " + e);
        }
    }

    /** Parses raw sections (tests feed corrupt ones); a flaw is a {@link DwarfException}. */
    static DwarfTypes parse(ByteBuffer info, ByteBuffer abbrev, ByteBuffer str) throws DwarfException {
        ByteBuffer empty = ByteBuffer.allocate(0);
        return index(new DwarfSections(info, abbrev, str, empty, empty, empty));
    }

    private static DwarfTypes index(DwarfSections s) throws DwarfException {
        DwarfDies dies = DwarfDies.read(s);
        DwarfDies.Variables v = dies.variables();
        return new DwarfTypes(dies, v.addresses(), v.typeOffsets(), null);
    }

    /** Why there are no field names, if there are none. */
    public Optional<String> problem() {
        return Optional.ofNullable(problem);
    }

    /** How many variables have a fixed address and a type. */
    public int variables() {
        return addresses.length;
    }

    /** Whether a variable with a known type starts at link-time address {@code start}: else {@link #path} is null at every offset. */
    public synchronized boolean typed(long start) {
        return Arrays.binarySearch(addresses, start) >= 0;
    }

    /**
     * The field and index path of byte {@code offset} of the variable at link-time address {@code start},
     * followed by {@code +} and the offset left inside the innermost part: {@code [3].value+0}, {@code .inner.flags+2}.
     * Null when no variable with a known type starts there or the offset lies outside it; the caller then
     * keeps {@code symbol+offset}.
     *
     * <p>A variable that is an array is named by arithmetic: its indices from the offset and the strides, worked
     * out once, then the path inside the element from a table by offset in the element, filled as bytes are
     * named (for elements up to {@link #ELEMENT_TABLE_MAX} bytes). A trace names most bytes of its arrays, each
     * once per cache miss, and walking the types per address was 45 % of print's reading thread on a matrix
     * product (issue 22). Anything else walks the types as {@link #walkPath} does; both give the same names.
     */
    public synchronized String path(long start, long offset) {
        int i = Arrays.binarySearch(addresses, start);
        if (i < 0 || offset < 0) return null;
        Layout l = layouts[i];
        if (l == null) layouts[i] = l = layout(typeOffsets[i]);
        if (!(l instanceof ArrayLayout a)) return walkPath(start, offset);
        if (a.size() > 0 && offset >= a.size()) return null;
        String inElement;
        long left = offset;
        StringBuilder path = new StringBuilder(24);
        for (long stride : a.strides()) {
            long index = left / stride;
            path.append('[').append(index).append(']');
            left -= index * stride;
        }
        if (a.suffixes() != null) {
            inElement = a.suffixes()[(int) left];
            if (inElement == null) {
                inElement = elementPath(a.element(), left);
                // Not kept when the types do not decode: the walk asks again each time, and so does this.
                if (inElement != NO_PATH) a.suffixes()[(int) left] = inElement;
            }
        } else {
            inElement = elementPath(a.element(), left);
        }
        return inElement == NO_PATH ? null : path.append(inElement).toString();
    }

    /** Element paths this long or shorter are kept by offset in the element: a few KiB of references per array type. */
    static final int ELEMENT_TABLE_MAX = 4096;
    /** An element path whose types do not decode: the whole name is null, as {@link #walkPath} gives. */
    private static final String NO_PATH = new String("(none)");

    /** How {@link #path} names a variable's bytes, decided at its first name. */
    private sealed interface Layout permits ArrayLayout, Walked {}

    /**
     * An array with a known element size: offset {@code o} is indices {@code o / strides[d]} (what is left
     * carried inward), then the element's own path ({@code suffixes} by offset in the element, when kept).
     */
    private record ArrayLayout(long size, long[] strides, long element, String[] suffixes) implements Layout {}

    /** Anything else, and an array {@link #walkPath} stops inside: named by walking its types. */
    private record Walked() implements Layout {}

    private static final Walked WALKED = new Walked();

    /** What {@link #walkPath}'s first step at depth 0 does for the type at {@code typeOffset}, worked out once. */
    private Layout layout(long typeOffset) {
        try {
            Type t = type(typeOffset, 0);
            long size = size(t, 0);
            if (!(t instanceof Array a)) return WALKED;
            long elementSize = size(type(a.element(), 0), 0);
            if (elementSize <= 0) return WALKED;
            long[] strides = strides(a, elementSize);
            if (strides == null) return WALKED;
            // A zero stride (an inner dimension of 0) makes the walk divide by zero for every offset: it names none.
            if (strides[0] == 0) return WALKED;
            return new ArrayLayout(size, strides, a.element(), elementSize <= ELEMENT_TABLE_MAX ? new String[(int) elementSize] : null);
        } catch (DwarfException | RuntimeException e) {
            return WALKED;
        }
    }

    /**
     * The bytes between consecutive indices of each dimension of {@code a}, outermost first; null when a count
     * other than the outermost is unknown (no stride past it is known).
     */
    private static long[] strides(Array a, long elementSize) {
        long stride = elementSize;
        long[] strides = new long[a.counts().length];
        for (int d = strides.length - 1; d >= 0; d--) {
            strides[d] = stride;
            if (d > 0 && a.counts()[d] < 0) return null;
            stride = Math.multiplyExact(stride, Math.max(0, a.counts()[d]));
        }
        return strides;
    }

    /** The path of byte {@code left} of an element of type {@code element}, as the walk goes on from depth 1; {@link #NO_PATH} when a type does not decode. */
    private String elementPath(long element, long left) {
        try {
            StringBuilder path = new StringBuilder();
            return walk(type(element, 0), left, 1, path);
        } catch (DwarfException | RuntimeException e) {
            return NO_PATH;
        }
    }

    /**
     * {@link #path} by walking the variable's types from the outermost in, one step per array or member: the
     * definition of its names, which {@link #path}'s arithmetic on arrays must equal (DwarfTypesTest compares
     * them byte for byte).
     */
    public synchronized String walkPath(long start, long offset) {
        int i = Arrays.binarySearch(addresses, start);
        if (i < 0 || offset < 0) return null;
        try {
            Type t = type(typeOffsets[i], 0);
            long size = size(t, 0);
            if (size > 0 && offset >= size) return null;
            return walk(t, offset, 0, new StringBuilder());
        } catch (DwarfException | RuntimeException e) {
            // A type that does not decode leaves this variable its plain name; the rest keep theirs.
            return null;
        }
    }

    /** Appends the path of byte {@code left} of type {@code t} to {@code path}, steps from {@code first} on, and {@code +} what is left. */
    private String walk(Type t, long left, int first, StringBuilder path) throws DwarfException {
        for (int depth = first; depth < MAX_DEPTH; depth++) {
            if (t instanceof Array a) {
                long elementSize = size(type(a.element(), depth), depth);
                if (elementSize <= 0) break;
                long[] strides = strides(a, elementSize);
                if (strides == null) break;
                for (int d = 0; d < strides.length; d++) {
                    long index = left / strides[d];
                    path.append('[').append(index).append(']');
                    left -= index * strides[d];
                }
                t = type(a.element(), depth);
            } else if (t instanceof Aggregate g) {
                Member m = g.memberAt(left, this, depth);
                if (m == null) break;
                if (m.name() != null) path.append('.').append(m.name());
                left -= m.start();
                if (m.bitField()) break;
                t = type(m.type(), depth);
            } else {
                break;
            }
        }
        return path.append('+').append(left).toString();
    }

    /**
     * The size in bytes of the type DIE at {@code typeOffset} (qualifiers and typedefs followed), for
     * {@link DwarfLocals}: -1 when it does not decode or has no fixed size (a VLA, an incomplete type).
     */
    synchronized long sizeOf(long typeOffset) {
        try {
            long n = size(type(typeOffset, 0), 0);
            return n > 0 ? n : -1;
        } catch (DwarfException | RuntimeException e) {
            return -1;
        }
    }

    // ---- types ----

    /** What naming needs of a type, qualifiers and typedefs already followed. */
    private sealed interface Type permits Leaf, Aggregate, Array {}

    /** A type without parts memtrace names: base types, pointers, enums, functions, incomplete types. */
    private record Leaf(long size) implements Type {}

    /** Counts per dimension, outermost first; -1 when unknown (a flexible or {@code extern int a[]} array). */
    private record Array(long element, long[] counts) implements Type {}

    /** A struct, class or union; a union names the first member that covers the byte (see docs/naming.md). */
    private record Aggregate(long size, List<Member> members) implements Type {
        Member memberAt(long offset, DwarfTypes types, int depth) throws DwarfException {
            for (Member m : members) {
                long end = m.bitField() ? m.end() : m.start() + types.size(types.type(m.type(), depth + 1), depth + 1);
                if (m.start() <= offset && offset < end) return m;
            }
            return null;
        }
    }

    /** A member's first byte and, for a bit-field, the byte after its last bit; {@code name} null when anonymous. */
    private record Member(String name, long start, long end, long type, boolean bitField) {}

    private long size(Type t, int depth) throws DwarfException {
        if (depth > MAX_DEPTH) throw new DwarfException("type nesting deeper than " + MAX_DEPTH);
        return switch (t) {
            case Leaf l -> l.size();
            case Aggregate g -> g.size();
            case Array a -> {
                long n = size(type(a.element(), depth + 1), depth + 1);
                for (long c : a.counts()) n = c < 0 ? 0 : Math.multiplyExact(n, c);
                yield n;
            }
        };
    }

    private Type type(long offset, int depth) throws DwarfException {
        Type t = types.get(offset);
        if (t == null) {
            t = decodeType(offset, depth);
            types.put(offset, t);
        }
        return t;
    }

    private Type decodeType(long offset, int depth) throws DwarfException {
        if (offset < 0) return new Leaf(0);
        if (depth > MAX_DEPTH) throw new DwarfException("type chain longer than " + MAX_DEPTH + " at 0x" + Long.toHexString(offset));
        DwarfUnit u = dies.unitOf(offset);
        DwarfCursor c = dies.cursor(u, offset);
        Die die = new Die();
        dies.readDie(c, u, die, true);
        return switch (die.tag) {
            case TAG_TYPEDEF, TAG_CONST, TAG_VOLATILE, TAG_RESTRICT, TAG_ATOMIC -> type(die.type, depth + 1);
            case TAG_STRUCTURE, TAG_CLASS, TAG_UNION -> die.declaration || !die.hasChildren ? new Leaf(Math.max(0, die.byteSize))
                    : new Aggregate(die.byteSize, members(c, u, die.tag == TAG_UNION));
            case TAG_ARRAY -> die.hasChildren ? array(c, u, die.type) : new Leaf(0);
            case TAG_POINTER, TAG_REFERENCE -> new Leaf(die.byteSize > 0 ? die.byteSize : u.addressSize());
            case TAG_ENUMERATION -> new Leaf(die.byteSize > 0 ? die.byteSize : 0);
            default -> new Leaf(Math.max(0, die.byteSize));
        };
    }

    private List<Member> members(DwarfCursor c, DwarfUnit u, boolean union) throws DwarfException {
        List<Member> list = new ArrayList<>();
        Die m = new Die();
        dies.forEachChild(c, u, m, () -> {
            if (m.tag != TAG_MEMBER) return;
            long start = union || m.memberLocation < 0 ? 0 : m.memberLocation;
            if (m.bitSize > 0) {
                long firstBit;
                if (m.dataBitOffset >= 0) {
                    firstBit = m.dataBitOffset;
                } else {
                    // DWARF 2 to 4: bit_offset counts from the storage unit's most significant bit; x86 is little-endian.
                    long storage = m.byteSize > 0 ? m.byteSize : size(type(m.type, 1), 1);
                    firstBit = start * 8 + storage * 8 - Math.max(0, m.bitOffset) - m.bitSize;
                }
                if (firstBit < 0) throw new DwarfException("bit-field " + m.name + " before its structure");
                list.add(new Member(m.name, firstBit / 8, (firstBit + m.bitSize - 1) / 8 + 1, m.type, true));
            } else {
                list.add(new Member(m.name, start, start, m.type, false));
            }
        });
        return List.copyOf(list);
    }

    private Type array(DwarfCursor c, DwarfUnit u, long element) throws DwarfException {
        List<Long> counts = new ArrayList<>();
        Die s = new Die();
        dies.forEachChild(c, u, s, () -> {
            if (s.tag != TAG_SUBRANGE) return;
            long lower = Math.max(0, s.lowerBound);
            if (s.count >= 0) counts.add(s.count);
            else if (s.upperBound >= 0) counts.add(s.upperBound - lower + 1);
            else counts.add(-1L);
        });
        if (counts.isEmpty()) return new Leaf(0);
        return new Array(element, counts.stream().mapToLong(Long::longValue).toArray());
    }
}
