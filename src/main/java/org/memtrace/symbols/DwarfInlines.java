package org.memtrace.symbols;

import static org.memtrace.symbols.Dwarf.*;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The inlined calls of a module, from its DWARF {@code DW_TAG_inlined_subroutine} entries (versions 2 to 5
 * as gcc writes them): for an instruction, the chain of functions inlined into one another at that point,
 * innermost first, each with the function's name and the file and line of its call ({@code DW_AT_call_file},
 * {@code DW_AT_call_line}), as {@code addr2line -i} gives them. At {@code -O2} a static function called
 * once is inlined into its caller and its code has no return address of its own; this chain is how a frame
 * of the stack shows it anyway (docs/stacks.md, "Inlined calls").
 *
 * <p>The index keeps, per inlined call, its address ranges ({@code DW_AT_low_pc}/{@code DW_AT_high_pc} or
 * {@code DW_AT_ranges} from {@code .debug_ranges} or {@code .debug_rnglists}), the call it sits in and where
 * it was called; the ranges become one sorted array of segments, each owned by the innermost call covering it,
 * so a lookup is one binary search and a walk up the parents. Names are read from the abstract origin (its
 * linkage name when it has one, as addr2line prefers, else its name) when the index is built.
 *
 * <p>Bad input: any flaw (a cut unit, an unknown form, a reference or range list outside its section) gives
 * the module no inlined calls, and {@link #problem} says why: frames then show the function the code lies in,
 * as before. Not read: split DWARF ({@code .dwo}), {@code dwz} supplementary files, type units.
 */
public final class DwarfInlines {
    /** One inlined call: the function inlined, and the file and line it was called from (null, 0 when unknown). */
    public record Inlined(String name, String callFile, int callLine) {}

    private static final int MAX_CHAIN = 64;
    private static final DwarfInlines NONE = new DwarfInlines(new long[0], new int[0], new Inlined[0], new int[0], null);

    private final long[] segmentStarts;
    private final int[] segmentOwners;
    private final Inlined[] calls;
    private final int[] parents;
    private final String problem;

    private DwarfInlines(long[] segmentStarts, int[] segmentOwners, Inlined[] calls, int[] parents, String problem) {
        this.segmentStarts = segmentStarts;
        this.segmentOwners = segmentOwners;
        this.calls = calls;
        this.parents = parents;
        this.problem = problem;
    }

    public static DwarfInlines none(String why) {
        return why == null ? NONE : new DwarfInlines(new long[0], new int[0], new Inlined[0], new int[0], why);
    }

    /** The inlined calls of {@code elf}'s {@code .debug_info}, names spelled by {@code demangler}; never throws. */
    public static DwarfInlines read(ElfFile elf, Demangler demangler) {
        Optional<ElfSection> info = elf.section(".debug_info");
        if (info.isEmpty() || info.get().fileSize() == 0) return none(elf.path() + " has no .debug_info");
        try {
            DwarfSections s = DwarfSections.read(elf);
            return new Reader(s, contents(elf, ".debug_line"), contents(elf, ".debug_ranges"), contents(elf, ".debug_rnglists")).index(demangler);
        } catch (ElfFormatException e) {
            return none(e.getMessage());
        } catch (DwarfException e) {
            return none(elf.path() + ": inlined calls: " + e.getMessage());
        } catch (RuntimeException e) {
            // Every read is checked; this is the net under a mistake of the reader's own, not an expected path.
            return none(elf.path() + ": inlined calls: " + e);
        }
    }

    /** Parses raw sections (tests feed corrupt ones); a flaw is a {@link DwarfException}. */
    static DwarfInlines parse(DwarfSections s, ByteBuffer line, ByteBuffer ranges, ByteBuffer rnglists) throws DwarfException {
        return new Reader(s, line, ranges, rnglists).index(Demangler.none());
    }

    private static ByteBuffer contents(ElfFile elf, String name) throws ElfFormatException {
        Optional<ElfSection> s = elf.section(name);
        return s.isPresent() ? elf.contentsOf(s.get()).slice().order(ByteOrder.LITTLE_ENDIAN) : ByteBuffer.allocate(0);
    }

    /** Why the module has no inlined calls, when it could not be read. */
    public Optional<String> problem() {
        return Optional.ofNullable(problem);
    }

    /** How many inlined calls the module has. */
    public int size() {
        return calls.length;
    }

    /** The calls inlined at link-time address {@code address}, innermost first; empty when none is. */
    public List<Inlined> chain(long address) {
        int i = Arrays.binarySearch(segmentStarts, address);
        if (i < 0) i = -i - 2;
        if (i < 0) return List.of();
        List<Inlined> chain = new ArrayList<>();
        for (int c = segmentOwners[i]; c >= 0 && chain.size() < MAX_CHAIN; c = parents[c]) chain.add(calls[c]);
        return chain;
    }

    /**
     * The index as the check reports read it in the traced process (agent/check/check_inline.h), names raw (the
     * C side spells them, so that {@code MEMTRACE_CHECK=mangled} keeps them): "MTINLIN1", u32 segments, calls,
     * string bytes; segments {u64 start, i32 owning call (-1: none), u32 0} sorted by start; calls {u32 name,
     * u32 call file (0xffffffff: unknown), u32 call line, i32 enclosing call (-1, or an earlier call)}; then the
     * NUL-terminated strings. Little-endian, link-time addresses. Null when the module has no inlined calls.
     */
    public byte[] encode() {
        if (calls.length == 0) return null;
        java.io.ByteArrayOutputStream strings = new java.io.ByteArrayOutputStream();
        Map<String, Integer> interned = new HashMap<>();
        java.util.function.ToIntFunction<String> str = t -> interned.computeIfAbsent(t, k -> {
            int at = strings.size();
            strings.writeBytes(k.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            strings.write(0);
            return at;
        });
        ByteBuffer b = ByteBuffer.allocate(8 + 12 + segmentStarts.length * 16 + calls.length * 16).order(ByteOrder.LITTLE_ENDIAN);
        b.put("MTINLIN1".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        b.putInt(segmentStarts.length).putInt(calls.length);
        int stringsAt = b.position();
        b.putInt(0);
        for (int i = 0; i < segmentStarts.length; i++) b.putLong(segmentStarts[i]).putInt(segmentOwners[i]).putInt(0);
        for (int i = 0; i < calls.length; i++) {
            Inlined c = calls[i];
            b.putInt(str.applyAsInt(c.name())).putInt(c.callFile() == null ? -1 : str.applyAsInt(c.callFile()))
                    .putInt(c.callLine()).putInt(parents[i] < i ? parents[i] : -1);
        }
        b.putInt(stringsAt, strings.size());
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream(b.capacity() + strings.size());
        all.writeBytes(b.array());
        all.writeBytes(strings.toByteArray());
        return all.toByteArray();
    }

    /** One pass over the units' DIEs. */
    private static final class Reader {
        private final DwarfSections s;
        /** The attribute reader every DIE of this walk reuses. */
        private final DwarfForm formReader = new DwarfForm();
        private final ByteBuffer line, ranges, rnglists;
        private final List<long[]> intervals = new ArrayList<>(); // start, end, call, depth
        private final List<long[]> found = new ArrayList<>(); // origin, call file (index), call line, parent, unit index
        private final List<String[]> unitFiles = new ArrayList<>();
        private final List<DwarfUnit> units = new ArrayList<>();
        private long[] unitStarts = new long[0];

        Reader(DwarfSections s, ByteBuffer line, ByteBuffer ranges, ByteBuffer rnglists) {
            this.s = s;
            this.line = line;
            this.ranges = ranges;
            this.rnglists = rnglists;
        }

        /** The attributes of one DIE this reader uses; -1 when absent. */
        private static final class Die {
            int tag;
            boolean children;
            long lowPc, highPc, ranges, origin, specification, callFile, callLine, stmtList, addrBase, rnglistsBase;
            boolean highIsAddress, rangesIndexed, lowIndexed, highIndexed;
            int nameForm, linkageForm;
            long name, linkage;

            void clear() {
                lowPc = highPc = ranges = origin = specification = callFile = callLine = stmtList = addrBase = rnglistsBase = -1;
                highIsAddress = rangesIndexed = lowIndexed = highIndexed = false;
                nameForm = linkageForm = 0;
                name = linkage = -1;
            }
        }

        /** The unit's base address and the bases its indexed forms count from. */
        private record UnitBase(long lowPc, long addrBase, long rnglistsBase) {}

        DwarfInlines index(Demangler demangler) throws DwarfException {
            Map<Long, DwarfAbbrev[]> tables = new HashMap<>();
            DwarfCursor c = new DwarfCursor(s.info());
            while (c.position < c.limit) {
                units.add(DwarfUnit.read(c, s, tables));
                c.position = units.getLast().end();
            }
            unitStarts = units.stream().mapToLong(DwarfUnit::start).toArray();
            Die die = new Die();
            for (int ui = 0; ui < units.size(); ui++) {
                DwarfUnit u = units.get(ui);
                DwarfCursor uc = cursor(u, u.firstDie());
                if (!readDie(uc, u, die, true)) continue;
                UnitBase base = new UnitBase(die.lowPc >= 0 && !die.lowIndexed ? die.lowPc : 0, die.addrBase, die.rnglistsBase);
                if (die.lowIndexed) base = new UnitBase(address(u, base, die.lowPc), die.addrBase, die.rnglistsBase);
                boolean lines = die.stmtList >= 0 && (die.tag == TAG_COMPILE_UNIT || die.tag == TAG_PARTIAL_UNIT);
                unitFiles.add(lines ? DwarfLines.fileNames(line, s.lineStr(), s.str(), die.stmtList) : new String[0]);
                if (!die.children) continue;
                // the enclosing inlined call of each open DIE with children; -1 outside any
                int[] context = new int[64];
                int depth = 0;
                context[0] = -1;
                while (uc.position < u.end()) {
                    if (!readDie(uc, u, die, false)) {
                        if (--depth < 0) break;
                        continue;
                    }
                    int enclosing = context[depth];
                    int own = enclosing;
                    if (die.tag == TAG_INLINED_SUBROUTINE) {
                        own = found.size();
                        found.add(new long[] {die.origin, die.callFile, die.callLine, enclosing, ui});
                        addRanges(u, base, die, own, depth);
                    } else if (die.tag == TAG_SUBPROGRAM) {
                        own = -1;
                    }
                    if (die.children) {
                        if (++depth == context.length) context = Arrays.copyOf(context, 2 * depth);
                        context[depth] = own;
                    }
                }
            }
            return build(demangler);
        }

        private void addRanges(DwarfUnit u, UnitBase base, Die die, int call, int depth) throws DwarfException {
            if (die.ranges >= 0) {
                if (u.version() >= 5) rangeList(u, base, die.ranges, die.rangesIndexed, call, depth);
                else oldRanges(u, base, die.ranges, call, depth);
            } else if (die.lowPc >= 0 && die.highPc >= 0) {
                long low = die.lowIndexed ? address(u, base, die.lowPc) : die.lowPc;
                long high = die.highIsAddress ? (die.highIndexed ? address(u, base, die.highPc) : die.highPc) : low + die.highPc;
                interval(low, high, call, depth);
            }
        }

        private void interval(long start, long end, int call, int depth) {
            if (start != 0 && Long.compareUnsigned(start, end) < 0) intervals.add(new long[] {start, end, call, depth});
        }

        /** DWARF 4's {@code .debug_ranges}: pairs relative to the base address, a base selection, (0, 0) to end. */
        private void oldRanges(DwarfUnit u, UnitBase unit, long offset, int call, int depth) throws DwarfException {
            if (offset < 0 || offset >= ranges.limit()) throw new DwarfException("range list 0x" + Long.toHexString(offset) + " outside .debug_ranges");
            DwarfCursor c = new DwarfCursor(ranges);
            c.position = (int) offset;
            long base = unit.lowPc();
            while (true) {
                long start = c.u64(), end = c.u64();
                if (start == 0 && end == 0) return;
                if (start == -1L) base = end;
                else interval(base + start, base + end, call, depth);
            }
        }

        /** DWARF 5's {@code .debug_rnglists}, at an offset or by index from the unit's {@code DW_AT_rnglists_base}. */
        private void rangeList(DwarfUnit u, UnitBase unit, long value, boolean indexed, int call, int depth) throws DwarfException {
            long offset = value;
            if (indexed) {
                long listBase = unit.rnglistsBase() >= 0 ? unit.rnglistsBase() : 12;
                long at = listBase + value * (u.offset64() ? 8 : 4);
                if (value < 0 || at < 0 || at + (u.offset64() ? 8 : 4) > rnglists.limit()) throw new DwarfException("range list index " + value + " outside .debug_rnglists");
                offset = listBase + (u.offset64() ? rnglists.getLong((int) at) : rnglists.getInt((int) at) & 0xffffffffL);
            }
            if (offset < 0 || offset >= rnglists.limit()) throw new DwarfException("range list 0x" + Long.toHexString(offset) + " outside .debug_rnglists");
            DwarfCursor c = new DwarfCursor(rnglists);
            c.position = (int) offset;
            long base = unit.lowPc();
            while (true) {
                int kind = c.u8();
                switch (kind) {
                    case 0 -> { return; }
                    case 1 -> base = address(u, unit, c.uleb());
                    case 2 -> { long a = address(u, unit, c.uleb()); interval(a, address(u, unit, c.uleb()), call, depth); }
                    case 3 -> { long a = address(u, unit, c.uleb()); interval(a, a + c.uleb(), call, depth); }
                    case 4 -> { long a = c.uleb(); interval(base + a, base + c.uleb(), call, depth); }
                    case 5 -> base = c.u64();
                    case 6 -> { long a = c.u64(); interval(a, c.u64(), call, depth); }
                    case 7 -> { long a = c.u64(); interval(a, a + c.uleb(), call, depth); }
                    default -> throw new DwarfException("range list entry kind " + kind);
                }
            }
        }

        /** Entry {@code index} of {@code .debug_addr} from the unit's {@code DW_AT_addr_base}. */
        private long address(DwarfUnit u, UnitBase unit, long index) throws DwarfException {
            long base = unit.addrBase() >= 0 ? unit.addrBase() : 8;
            long at = base + index * 8;
            if (index < 0 || at < 0 || at + 8 > s.addr().limit()) throw new DwarfException("address index " + index + " outside .debug_addr");
            return s.addr().getLong((int) at);
        }

        /** Segments owned by the innermost call over them, names resolved, files looked up. */
        private DwarfInlines build(Demangler demangler) throws DwarfException {
            Map<Long, String> names = new HashMap<>();
            String[] raw = new String[found.size()];
            for (int i = 0; i < raw.length; i++) {
                long origin = found.get(i)[0];
                String n = names.get(origin);
                if (n == null && !names.containsKey(origin)) {
                    n = origin >= 0 ? name(origin, 0) : null;
                    names.put(origin, n);
                }
                raw[i] = n == null ? "??" : n;
            }
            Map<String, String> spelled = demangler.demangle(Arrays.stream(raw).filter(Demangler::looksMangled).distinct().toList());
            Inlined[] calls = new Inlined[raw.length];
            int[] parents = new int[raw.length];
            for (int i = 0; i < raw.length; i++) {
                long[] f = found.get(i);
                String[] files = unitFiles.get((int) f[4]);
                String file = f[1] >= 0 && f[1] < files.length ? files[(int) f[1]] : null;
                calls[i] = new Inlined(spelled.getOrDefault(raw[i], raw[i]), file, f[2] > 0 && f[2] <= Integer.MAX_VALUE ? (int) f[2] : 0);
                parents[i] = (int) f[3];
            }
            intervals.sort((a, b) -> a[0] != b[0] ? Long.compareUnsigned(a[0], b[0])
                    : a[1] != b[1] ? Long.compareUnsigned(b[1], a[1]) : Long.compare(a[3], b[3]));
            long[] starts = new long[2 * intervals.size() + 1];
            int[] owners = new int[starts.length];
            int n = 0;
            List<long[]> open = new ArrayList<>();
            for (long[] iv : intervals) {
                n = close(open, iv[0], starts, owners, n);
                open.add(iv);
                n = segment(starts, owners, n, iv[0], (int) iv[2]);
            }
            n = close(open, -1L, starts, owners, n);
            return new DwarfInlines(Arrays.copyOf(starts, n), Arrays.copyOf(owners, n), calls, parents, null);
        }

        /** Ends the open intervals that end at or before {@code at}, each handing its addresses back to the one below. */
        private static int close(List<long[]> open, long at, long[] starts, int[] owners, int n) {
            while (!open.isEmpty() && Long.compareUnsigned(open.getLast()[1], at) <= 0) {
                long end = open.removeLast()[1];
                while (!open.isEmpty() && Long.compareUnsigned(open.getLast()[1], end) <= 0) open.removeLast();
                n = segment(starts, owners, n, end, open.isEmpty() ? -1 : (int) open.getLast()[2]);
            }
            return n;
        }

        private static int segment(long[] starts, int[] owners, int n, long start, int owner) {
            if (n > 0 && Long.compareUnsigned(starts[n - 1], start) >= 0) {
                n--; // a later segment at the same start wins; one that would go back is folded in
                start = Math.max(start, starts[n]);
            }
            if (n > 0 && owners[n - 1] == owner) return n;
            starts[n] = start;
            owners[n] = owner;
            return n + 1;
        }

        /** The name of the function at DIE {@code offset}: its linkage name, else its name, else its origin's or declaration's. */
        private String name(long offset, int hops) throws DwarfException {
            if (hops > 8) return null;
            DwarfUnit u = unitOf(offset);
            Die d = new Die();
            readDie(cursor(u, offset), u, d, true);
            if (d.linkage >= 0) return string(u, d.linkageForm, d.linkage);
            if (d.name >= 0) return string(u, d.nameForm, d.name);
            long other = d.origin >= 0 ? d.origin : d.specification;
            return other >= 0 ? name(other, hops + 1) : null;
        }

        private String string(DwarfUnit u, int form, long value) throws DwarfException {
            return switch (form) {
                case FORM_STRING -> DwarfCursor.stringAt(s.info(), value, ".debug_info");
                case FORM_STRP -> DwarfCursor.stringAt(s.str(), value, ".debug_str");
                case FORM_LINE_STRP -> DwarfCursor.stringAt(s.lineStr(), value, ".debug_line_str");
                default -> s.indexedString(u, value);
            };
        }

        private DwarfUnit unitOf(long offset) throws DwarfException {
            int i = Arrays.binarySearch(unitStarts, offset);
            if (i < 0) i = -i - 2;
            if (i < 0 || offset < units.get(i).firstDie() || offset >= units.get(i).end())
                throw new DwarfException("reference 0x" + Long.toHexString(offset) + " is in no unit's DIEs");
            return units.get(i);
        }

        private DwarfCursor cursor(DwarfUnit u, long offset) {
            DwarfCursor c = new DwarfCursor(s.info());
            c.position = (int) offset;
            c.limit(u.end());
            return c;
        }

        /** Reads the DIE at the cursor; false for the null entry ending a list of children. */
        private boolean readDie(DwarfCursor c, DwarfUnit u, Die die, boolean all) throws DwarfException {
            long code = c.uleb();
            if (code == 0) return false;
            DwarfAbbrev a = u.abbrev(code, c.position);
            die.tag = a.tag();
            die.children = a.hasChildren();
            die.clear();
            int size = u.fixedSize(a);
            if (!all && a.tag() != TAG_INLINED_SUBROUTINE && size >= 0) {
                c.skip(size);
                return true;
            }
            for (int i = 0; i < a.attributes().length; i++) attribute(c, u, die, a.attributes()[i], a.forms()[i], a.implicitConstants()[i]);
            return true;
        }

        private void attribute(DwarfCursor c, DwarfUnit u, Die die, int at, int form, long implicit) throws DwarfException {
            DwarfForm f = formReader;
            f.read(c, u, form, implicit);
            if (f.kind == DwarfForm.Kind.SKIPPED || f.kind == DwarfForm.Kind.BLOCK) return;
            form = f.form;
            long value = f.value;
            boolean reference = f.kind == DwarfForm.Kind.REFERENCE;
            boolean address = f.kind == DwarfForm.Kind.ADDRESS || f.kind == DwarfForm.Kind.INDEXED_ADDRESS;
            boolean indexed = f.kind == DwarfForm.Kind.INDEXED_ADDRESS || f.kind == DwarfForm.Kind.LIST_INDEX;
            boolean string = f.isString();
            switch (at) {
                case AT_LOW_PC -> { if (address) { die.lowPc = value; die.lowIndexed = indexed; } }
                case AT_HIGH_PC -> { die.highPc = value; die.highIsAddress = address; die.highIndexed = indexed; }
                case AT_RANGES -> { die.ranges = value; die.rangesIndexed = form == FORM_RNGLISTX; }
                case AT_ABSTRACT_ORIGIN -> die.origin = reference ? value : -1;
                case AT_SPECIFICATION -> die.specification = reference ? value : -1;
                case AT_CALL_FILE -> die.callFile = reference || string || address ? -1 : value;
                case AT_CALL_LINE -> die.callLine = reference || string || address ? -1 : value;
                case AT_STMT_LIST -> die.stmtList = value;
                case AT_ADDR_BASE -> die.addrBase = value;
                case AT_RNGLISTS_BASE -> die.rnglistsBase = value;
                case AT_NAME -> { if (string) { die.name = value; die.nameForm = form; } }
                case AT_LINKAGE_NAME, AT_MIPS_LINKAGE_NAME -> { if (string) { die.linkage = value; die.linkageForm = form; } }
                default -> { }
            }
        }
    }
}
