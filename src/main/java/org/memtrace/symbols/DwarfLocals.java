package org.memtrace.symbols;

import static org.memtrace.symbols.Dwarf.*;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The stack variables of an executable's functions, from its DWARF (versions 2 to 5 as gcc writes them), for
 * {@code memtrace run --check} (docs/check.md, "Stack variables"): for each function that keeps a frame pointer
 * ({@code push %rbp; mov %rsp,%rbp}, optionally after {@code endbr64}) and whose frame base is the canonical
 * frame address ({@code DW_OP_call_frame_cfa}, gcc's choice), every variable and parameter whose location is
 * exactly {@code DW_OP_fbreg N} and whose type has a fixed size: its name, its offset from the CFA (which is
 * {@code %rbp + 16} in such a function's body), its size and declaration line. With the module's line table,
 * {@link #encode} makes the compact table the agent reads (agent/check_locals.c says its layout).
 *
 * <p>What it leaves out: functions without a frame pointer (gcc's -O1 and up: their CFA cannot be found from
 * {@code %rbp}), variables in registers or in location lists (optimised code), variable-length arrays and
 * allocas (no fixed size), variables of inlined calls (none at -O0), split DWARF and {@code dwz} files. Any
 * flaw in the DWARF gives no functions at all, never a half-read table.
 */
public final class DwarfLocals {
    /**
     * A variable: {@code cfaOffset} from the canonical frame address (negative: below it), {@code line} 0 when
     * unknown; {@code scope} the function it is declared in when that is a call inlined into the function whose
     * frame holds it ({@link #readOptimised}), else null.
     */
    public record Local(String name, long cfaOffset, long size, int line, String scope) {
        public Local(String name, long cfaOffset, long size, int line) { this(name, cfaOffset, size, line, null); }
    }

    /**
     * A function's code {@code [low, high)} (link-time addresses) and its variables; {@code unoptimised} when its
     * unit's producer is gcc's with no {@code -O} but {@code -O0} (gcc records its switches there): only then do
     * its indexed accesses name their variable by their displacement (docs/check.md, "Direct accesses").
     * {@code described} when every variable and parameter of its body is in {@code locals} or static (a
     * {@code DW_OP_addr} location), none in another kind of location (a VLA's {@code DW_OP_fbreg N; DW_OP_deref},
     * a location list), and it takes no variable arguments (whose register save area gcc lays out in the frame
     * with no DWARF): only then is a frame byte no variable holds known to be no variable's.
     */
    public record Function(String name, long low, long high, List<Local> locals, boolean unoptimised, boolean described) {
        /** The same function with its variables and the flags as they were read (the walk fills locals first). */
        Function described(boolean d) { return new Function(name, low, high, locals, unoptimised, d); }
    }

    private static final int TAG_FORMAL_PARAMETER = 0x05;
    private static final int TAG_LEXICAL_BLOCK = 0x0b;
    private static final int TAG_UNSPECIFIED_PARAMETERS = 0x18;
    private static final int OP_ADDR = 0x03;
    private static final int AT_FRAME_BASE = 0x40;
    private static final int AT_DECL_LINE = 0x3b;
    private static final int AT_PRODUCER = 0x25;
    private static final int OP_FBREG = 0x91;
    private static final int OP_CALL_FRAME_CFA = 0x9c;
    private static final int MAX_DEPTH = 256;

    private DwarfLocals() {}

    /**
     * Both readings of a module's functions from one reading of its DWARF, for every classifier of a check plan
     * and for run --check's table (rewrite.StackSlots, rewrite.FrameTable): {@code framed} as {@link #read}
     * gives them, {@code optimised} as {@link #readOptimised}.
     */
    public record Frames(List<Function> framed, List<Function> optimised) {
        public static final Frames NONE = new Frames(List.of(), List.of());
    }

    /** The functions of {@code elf} with their stack variables; empty when it has none or they cannot be read. */
    public static List<Function> read(ElfFile elf) { return readAll(elf).framed(); }

    /**
     * Every function of {@code elf}'s DWARF with a CFA frame base, frame pointer or not, its variables including
     * those of the calls inlined into it (their {@link Local#scope}; names, lines and types through
     * {@code DW_AT_abstract_origin}), for optimised code addressed from {@code %rsp} (RspFrames, in the rewrite planner).
     * Only variables whose location is one {@code DW_OP_fbreg N} for their whole scope: one in a location list
     * (a slot for part of its range) is left out, and its function is not {@link Function#described}.
     */
    public static List<Function> readOptimised(ElfFile elf) { return readAll(elf).optimised(); }

    /**
     * Both readings in one: the sections and the types read once, the DIEs walked twice (the abstract DIEs'
     * names, lines and types first, then every concrete DIE for both readings at once) where the two readings
     * took five walks and the types twice. Any flaw in the DWARF gives no functions at all, as each reading did.
     */
    public static Frames readAll(ElfFile elf) {
        Optional<ElfSection> info = elf.section(".debug_info");
        if (info.isEmpty() || info.get().fileSize() == 0) return Frames.NONE;
        try {
            DwarfSections s = DwarfSections.read(elf);
            DwarfTypes types = DwarfTypes.read(elf);
            Map<Long, Origin> origins = new HashMap<>();
            collect(s, origins);
            Reader framed = new Reader(false), optimised = new Reader(true);
            walk(s, types, origins, framed, optimised);
            List<Function> withFrame = new ArrayList<>();
            for (Function f : framed.out) if (!f.locals().isEmpty() && framePointer(elf, f.low())) withFrame.add(f);
            withFrame.sort(Comparator.comparingLong(Function::low));
            List<Function> all = new ArrayList<>(optimised.out);
            all.removeIf(f -> f.locals().isEmpty());
            all.sort(Comparator.comparingLong(Function::low));
            return new Frames(List.copyOf(withFrame), List.copyOf(all));
        } catch (ElfFormatException | DwarfException | RuntimeException e) {
            // Every read is checked; a flaw leaves the run without stack checks rather than with half of them.
            return Frames.NONE;
        }
    }

    /** What a concrete DIE takes from its {@code DW_AT_abstract_origin}. */
    private record Origin(String name, long type, long line) {}

    /** Whether the code at {@code low} sets up a frame pointer first: [endbr64] push %rbp; mov %rsp,%rbp. */
    private static boolean framePointer(ElfFile elf, long low) {
        ByteBuffer b = elf.bytesAt(low, 8);
        if (b == null || b.remaining() < 4) return false;
        byte[] c = new byte[Math.min(8, b.remaining())];
        b.get(c);
        int at = c.length >= 8 && (c[0] & 0xff) == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && (c[3] & 0xff) == 0xfa ? 4 : 0;
        return c.length >= at + 4 && c[at] == 0x55 && c[at + 1] == 0x48 && (c[at + 2] & 0xff) == 0x89 && (c[at + 3] & 0xff) == 0xe5;
    }

    /** One DIE's attributes of interest; -1 (null) when absent. */
    private static final class Die {
        int tag;
        boolean children;
        String name, producer;
        long low, high, type, line, fbreg, origin, specification;
        boolean highIsOffset, cfaBase, fbregSet, located, staticAddress;

        void clear() {
            name = producer = null;
            low = high = type = line = fbreg = origin = specification = -1;
            highIsOffset = cfaBase = fbregSet = located = staticAddress = false;
        }
    }

    /** What a walk does with each DIE: {@code depth} 0 for a unit's own; a DIE with children opens {@code depth + 1}. */
    private interface Visitor {
        default void unit() {}

        void die(long offset, Die die, int depth);

        default void unitEnd() {}
    }

    /**
     * Every DIE of every unit, its attributes read; a C++ function of a namespace or a class, defined by a DIE with
     * no name of its own, only {@code DW_AT_specification} to its declaration (which gcc writes before it), named
     * by that declaration.
     */
    private static void eachDie(DwarfSections s, Visitor v) throws DwarfException {
        Map<Long, DwarfAbbrev[]> tables = new HashMap<>();
        DwarfForm f = new DwarfForm();
        DwarfCursor c = new DwarfCursor(s.info());
        Die die = new Die();
        while (c.position < c.limit) {
            DwarfUnit u = DwarfUnit.read(c, s, tables);
            DwarfCursor uc = new DwarfCursor(s.info());
            uc.position = u.firstDie();
            uc.limit(u.end());
            Map<Long, String> declared = new HashMap<>(); // the unit's named subprograms by offset
            v.unit();
            int depth = 0;
            while (uc.position < u.end()) {
                long dieOffset = uc.position;
                long code = uc.uleb();
                if (code == 0) {
                    if (--depth < 0) depth = 0;
                    continue;
                }
                DwarfAbbrev a = code < u.abbrevs().length ? u.abbrevs()[(int) code] : null;
                if (a == null) throw new DwarfException("undefined abbreviation " + code);
                die.clear();
                die.tag = a.tag();
                die.children = a.hasChildren();
                for (int i = 0; i < a.attributes().length; i++) attribute(uc, u, s, f, die, a.attributes()[i], a.forms()[i], a.implicitConstants()[i]);
                if (die.tag == TAG_SUBPROGRAM) {
                    if (die.name == null && die.specification >= 0) die.name = declared.get(die.specification);
                    if (die.name != null) declared.put(dieOffset, die.name);
                }
                if (die.children && depth >= MAX_DEPTH) throw new DwarfException("DIEs nested deeper than " + MAX_DEPTH);
                v.die(dieOffset, die, depth);
                if (die.children) depth++;
            }
            v.unitEnd();
            c.position = u.end();
        }
    }

    /** Every named DIE's name, type and line, by offset: what a concrete DIE's {@code DW_AT_abstract_origin} gives it. */
    private static void collect(DwarfSections s, Map<Long, Origin> origins) throws DwarfException {
        eachDie(s, (offset, die, depth) -> {
            if (die.name != null) origins.put(offset, new Origin(die.name, die.type, die.line));
        });
    }

    /**
     * The concrete DIEs for each of {@code readers}: an {@link Reader#inlined} one sees each DIE with what it lacks
     * taken from its abstract origin, the other as it is.
     */
    private static void walk(DwarfSections s, DwarfTypes types, Map<Long, Origin> origins, Reader... readers) throws DwarfException {
        eachDie(s, new Visitor() {
            boolean unoptimised;

            @Override
            public void unit() {
                unoptimised = false;
                for (Reader r : readers) r.unit();
            }

            @Override
            public void die(long offset, Die die, int depth) {
                if (die.tag == TAG_COMPILE_UNIT) unoptimised = unoptimised(die.producer);
                Origin o = die.origin >= 0 ? origins.get(die.origin) : null;
                for (Reader r : readers) {
                    boolean from = r.inlined && o != null;
                    r.die(die, from && die.name == null ? o.name() : die.name, from && die.type < 0 ? o.type() : die.type,
                            from && die.line < 0 ? o.line() : die.line, depth, unoptimised, types);
                }
            }

            @Override
            public void unitEnd() {
                for (Reader r : readers) r.unitEnd();
            }
        });
    }

    /**
     * One reading's functions as the walk finds them. Not {@code inlined} ({@link #read}): the variables of
     * inlined calls are left out. {@code inlined} ({@link #readOptimised}): they count as their enclosing
     * function's, with the inlined function's name as their scope.
     */
    private static final class Reader {
        final boolean inlined;
        final List<Function> out = new ArrayList<>();
        /** Per depth: the function whose body this depth is in (null outside one, or in an inlined call when not {@link #inlined}). */
        private final Function[] open = new Function[MAX_DEPTH];
        /** Per depth: the inlined call's function, null in the function's own body. */
        private final String[] scopes = new String[MAX_DEPTH];
        private final Set<Function> undescribed = Collections.newSetFromMap(new IdentityHashMap<>());
        private int unitStart;

        Reader(boolean inlined) { this.inlined = inlined; }

        void unit() {
            unitStart = out.size();
            undescribed.clear();
        }

        void die(Die die, String name, long type, long line, int depth, boolean unoptimised, DwarfTypes types) {
            Function in = depth > 0 ? open[depth - 1] : null;
            String scope = depth > 0 ? scopes[depth - 1] : null;
            Function mine = in;
            if (die.tag == TAG_SUBPROGRAM) {
                mine = null;
                if (die.low >= 0 && die.high >= 0 && die.cfaBase && name != null) {
                    long high = die.highIsOffset ? die.low + die.high : die.high;
                    mine = new Function(name, die.low, high, new ArrayList<>(), unoptimised, true);
                    out.add(mine);
                }
                scope = null;
            } else if (die.tag == TAG_INLINED_SUBROUTINE) {
                if (!inlined) mine = null;
                else scope = name != null ? name : "?"; // its variables are in the enclosing function's frame
            } else if ((die.tag == TAG_VARIABLE || die.tag == TAG_FORMAL_PARAMETER) && in != null) {
                long size = die.fbregSet && type >= 0 ? types.sizeOf(type) : -1;
                if (size > 0 && name != null) in.locals().add(new Local(name, die.fbreg, size, (int) Math.max(0, line), scope));
                else if (die.located && !die.staticAddress) undescribed.add(in); // a frame slot not known
            } else if (die.tag == TAG_UNSPECIFIED_PARAMETERS && in != null) {
                undescribed.add(in); // variadic: gcc's register save area is in the frame, in no variable
            } else if (die.tag != TAG_LEXICAL_BLOCK) {
                mine = null; // a nested type's or other DIE's children are no frame's
            }
            if (die.children) {
                scopes[depth] = scope;
                open[depth] = mine;
            }
        }

        void unitEnd() {
            for (int i = unitStart; i < out.size(); i++) if (undescribed.contains(out.get(i))) out.set(i, out.get(i).described(false));
        }
    }

    private static void attribute(DwarfCursor c, DwarfUnit u, DwarfSections s, DwarfForm f, Die die, int at, int form, long implicit)
            throws DwarfException {
        f.read(c, u, form, implicit);
        switch (at) {
            case AT_NAME -> {
                if (f.kind == DwarfForm.Kind.INLINE_STRING) die.name = DwarfCursor.stringAt(s.info(), f.value, ".debug_info");
                else if (f.kind == DwarfForm.Kind.STRING_OFFSET)
                    die.name = DwarfCursor.stringAt(f.form == FORM_STRP ? s.str() : s.lineStr(), f.value, ".debug_str");
                else if (f.kind == DwarfForm.Kind.STRING_INDEX) die.name = s.indexedString(u, f.value);
            }
            case AT_PRODUCER -> {
                if (f.kind == DwarfForm.Kind.INLINE_STRING) die.producer = DwarfCursor.stringAt(s.info(), f.value, ".debug_info");
                else if (f.kind == DwarfForm.Kind.STRING_OFFSET)
                    die.producer = DwarfCursor.stringAt(f.form == FORM_STRP ? s.str() : s.lineStr(), f.value, ".debug_str");
                else if (f.kind == DwarfForm.Kind.STRING_INDEX) die.producer = s.indexedString(u, f.value);
            }
            case AT_LOW_PC -> die.low = f.kind == DwarfForm.Kind.ADDRESS ? f.value : indexedAddress(s, u, f);
            case AT_HIGH_PC -> {
                if (f.kind == DwarfForm.Kind.CONSTANT) { die.high = f.value; die.highIsOffset = true; }
                else die.high = f.kind == DwarfForm.Kind.ADDRESS ? f.value : indexedAddress(s, u, f);
            }
            case AT_TYPE -> die.type = f.kind == DwarfForm.Kind.REFERENCE ? f.value : -1;
            case AT_ABSTRACT_ORIGIN -> die.origin = f.kind == DwarfForm.Kind.REFERENCE ? f.value : -1;
            case AT_SPECIFICATION -> die.specification = f.kind == DwarfForm.Kind.REFERENCE ? f.value : -1;
            case AT_DECL_LINE -> die.line = f.kind == DwarfForm.Kind.CONSTANT ? f.value : -1;
            case AT_FRAME_BASE -> die.cfaBase = f.kind == DwarfForm.Kind.BLOCK && f.value == 1
                    && (s.info().get(f.blockStart) & 0xff) == OP_CALL_FRAME_CFA;
            case AT_LOCATION -> {
                die.located = true;
                die.staticAddress = f.kind == DwarfForm.Kind.BLOCK && f.value == 9 && (s.info().get(f.blockStart) & 0xff) == OP_ADDR;
                if (f.kind == DwarfForm.Kind.BLOCK && f.value >= 2 && (s.info().get(f.blockStart) & 0xff) == OP_FBREG) {
                    DwarfCursor e = new DwarfCursor(s.info());
                    e.position = f.blockStart + 1;
                    e.limit(f.blockStart + (int) f.value);
                    long off = e.sleb();
                    if (e.position == f.blockStart + f.value) { die.fbreg = off; die.fbregSet = true; }
                }
            }
            default -> { }
        }
    }

    /**
     * Whether a unit's producer says gcc compiled it without optimisation: "GNU C17 12.2.0 -mtune=generic -g -O0"
     * or no {@code -O} at all. Another compiler, or switches not recorded, count as optimised (not known).
     */
    static boolean unoptimised(String producer) {
        if (producer == null || !producer.startsWith("GNU ") || !producer.contains(" -")) return false;
        for (String word : producer.split(" "))
            if (word.startsWith("-O") && !word.equals("-O0")) return false;
        return true;
    }

    /** An {@code addrx} address: .debug_addr from the unit's base (8 when the unit DIE gave none, as gcc's single-unit files). */
    private static long indexedAddress(DwarfSections s, DwarfUnit u, DwarfForm f) {
        return -1; // gcc writes DW_FORM_addr outside split DWARF, which is not read here
    }

    /**
     * The agent's table (agent/check_locals.c): "MTLOCAL1", then u32 counts of functions, variables, line rows,
     * files and string bytes; functions {u64 low, u64 high, u32 name, u32 first variable, u32 variables, u32 frame};
     * variables {i64 CFA offset, u64 size, u32 name, u32 line}; rows {u64 start, i32 file (-1: a sequence's end),
     * u32 line}; files {u32 name}; then the NUL-terminated strings. Little-endian, addresses link-time.
     */
    public static byte[] encode(List<Function> functions, LineTable lines) { return encode(functions, lines, f -> 0); }

    /**
     * The same, each function's last word {@code frame.applyAsInt(f)}: 0 for a frame-pointer function (its CFA is
     * {@code %rbp + 16}), k + 1 for an optimised one whose every call has the CFA at {@code %rsp + k}.
     */
    public static byte[] encode(List<Function> functions, LineTable lines, java.util.function.ToIntFunction<Function> frame) {
        ByteArrayOutputStream strings = new ByteArrayOutputStream();
        Map<String, Integer> interned = new HashMap<>();
        java.util.function.ToIntFunction<String> str = t -> interned.computeIfAbsent(t, k -> {
            int at = strings.size();
            strings.writeBytes(k.getBytes(StandardCharsets.UTF_8));
            strings.write(0);
            return at;
        });
        int nlocals = functions.stream().mapToInt(fn -> fn.locals().size()).sum();
        int nrows = lines == null ? 0 : lines.rows();
        List<String> files = new ArrayList<>();
        Map<String, Integer> fileIndex = new HashMap<>();
        int[] rowFile = new int[nrows];
        for (int i = 0; i < nrows; i++) {
            String name = lines.rowFile(i);
            rowFile[i] = name == null ? -1 : fileIndex.computeIfAbsent(name, k -> { files.add(k); return files.size() - 1; });
        }
        ByteBuffer b = ByteBuffer.allocate(8 + 20 + functions.size() * 32 + nlocals * 24 + nrows * 16 + files.size() * 4).order(ByteOrder.LITTLE_ENDIAN);
        b.put("MTLOCAL1".getBytes(StandardCharsets.US_ASCII));
        b.putInt(functions.size()).putInt(nlocals).putInt(nrows).putInt(files.size());
        int stringsAt = b.position();
        b.putInt(0);
        int first = 0;
        for (Function fn : functions) {
            b.putLong(fn.low()).putLong(fn.high()).putInt(str.applyAsInt(fn.name())).putInt(first).putInt(fn.locals().size())
                    .putInt(frame.applyAsInt(fn));
            first += fn.locals().size();
        }
        for (Function fn : functions)
            for (Local l : fn.locals()) b.putLong(l.cfaOffset()).putLong(l.size()).putInt(str.applyAsInt(l.name())).putInt(l.line());
        for (int i = 0; i < nrows; i++) b.putLong(lines.rowStart(i)).putInt(rowFile[i]).putInt(lines.rowLine(i));
        for (String file : files) b.putInt(str.applyAsInt(file));
        b.putInt(stringsAt, strings.size());
        ByteArrayOutputStream all = new ByteArrayOutputStream(b.capacity() + strings.size());
        all.writeBytes(b.array());
        all.writeBytes(strings.toByteArray());
        return all.toByteArray();
    }
}
