package org.memtrace.mtr;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.memtrace.event.Event;
import org.memtrace.event.SkeletonParts;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfFormatException;
import org.memtrace.symbols.ElfSection;

/**
 * The {@code memtrace_skel} section of a file built with {@code memtrace cc --skeleton} (docs/compiled-in.md,
 * "Skeleton loops"): per loop, the registers its entry probe logs with their per-iteration steps, and its
 * body in program order, each position either an access the replay computes or a site whose records are
 * logged. Also the loops the rewriter declined, with the reason.
 */
public final class SkeletonTable {
    static final String SECTION = "memtrace_skel";
    static final int KIND_VALUE = 7, KIND_EXIT = 8, KIND_MARKER = 9;
    /** An item's {@code cond}: a logged position of a block that may not run, told by its record alone. */
    public static final int OPTIONAL = 0xff;
    /** A slot field naming no register (an item's index, a step's slot). */
    public static final int NONE = 0xff;
    private static final int ITEM_SIZE = 32, MARKER_SIZE = 8, CONDITION_SIZE = 24;
    /** The section versions this reader knows: 1 (no version record, files of earlier builds) and 2 (computed conditions). */
    static final int VERSION = 2;
    /** A marker entry's last byte for a condition the replay computes (0: a block's marker, 1: a side exit's). */
    private static final int MARKER_COMPUTED = 2;
    /** Terms a computed condition may and (the rewriter writes up to 4). */
    private static final int MAX_TERMS = 16;

    /**
     * A conditional block's condition, computed per iteration instead of logged: the x86 flags of {@code a − b}
     * ({@code op} 1, {@code cmp}) or {@code a & b} ({@code op} 2, {@code test}) at {@code width} bytes, each
     * operand a slot's register (its value at the compare: {@code phase} bit 0 for a, bit 1 for b, when its
     * update comes before the compare in the body) or the immediate when its slot is {@link #NONE}; the block
     * runs when the jump of condition code {@code cc} (2 b, 3 ae, 4 e, 5 ne, 6 be, 7 a, 8 s, 9 ns, 12 l, 13 ge,
     * 14 le, 15 g) is taken, if {@code whenTaken}, else when it is not, and {@code and} (the condition of the
     * jump's own block, when that one does not run every iteration; null when it does) holds too.
     */
    public record Condition(int op, int width, int cc, boolean whenTaken, int slotA, int slotB, long immA, long immB, int phase,
                            Condition and) {
        public static final int CMP = 1, TEST = 2;

        /** One jump's term, with no other and-ed to it. */
        public Condition(int op, int width, int cc, boolean whenTaken, int slotA, int slotB, long immA, long immB, int phase) {
            this(op, width, cc, whenTaken, slotA, slotB, immA, immB, phase, null);
        }

        /** Whether the block runs, given the operands' values at the compare (an immediate operand's value is ignored). */
        public boolean holds(long a, long b) {
            if (slotA == NONE) a = immA;
            if (slotB == NONE) b = immB;
            int shift = 64 - 8 * width;
            long r = op == CMP ? a - b : a & b;
            // the operands and the result as the CPU sees them at this width: the top bit is the sign
            long ra = r << shift, aa = a << shift, ba = b << shift;
            boolean zf = ra == 0, sf = ra < 0;
            boolean cf = op == CMP && Long.compareUnsigned(aa, ba) < 0;
            boolean of = op == CMP && ((aa ^ ba) & (aa ^ ra)) < 0;
            boolean taken = switch (cc) {
                case 2 -> cf;
                case 3 -> !cf;
                case 4 -> zf;
                case 5 -> !zf;
                case 6 -> cf || zf;
                case 7 -> !cf && !zf;
                case 8 -> sf;
                case 9 -> !sf;
                case 12 -> sf != of;
                case 13 -> sf == of;
                case 14 -> zf || sf != of;
                case 15 -> !zf && sf == of;
                default -> throw new IllegalStateException("condition code " + cc); // refused when the section is read
            };
            return taken == whenTaken;
        }

        static boolean known(int cc) { return cc >= 2 && cc <= 15 && cc != 10 && cc != 11; }
    }

    /** Why a loop was not skeletonized, by the code the rewriter writes (1: files of the single-block rewriter). */
    static final List<String> REASONS = List.of("", "more than one block", "call in loop without a record of its own (--no-stack)",
            "header reached by another jump", "indirect jump in the function", "rep string instruction in loop",
            "no induction register (trip count unknown)", "address depends on a load",
            "no address affine in the loop's registers", "back edge to a label the rewriter cannot place",
            "inner loop in the body", "exit from the middle of the body (break, return, goto)",
            "jump into the body from outside", "more than one back edge (continue)",
            "more conditional blocks or accesses than a loop record holds",
            "exit depends on loaded data and too few accesses computed per iteration to pay for the loop's records",
            "as many accesses logged as computed in every iteration",
            "entered by a jump to a test that reads memory or writes a register (at -O0: the counter lives in memory)",
            "fewer accesses computed per entry than values logged (a constant trip count)",
            "access the link may take away in loop (GOT load, -fno-plt call, TLS resolver call)",
            "inner loop whose registers at entry are not affine in the outer loop's",
            "inner loop whose trip count the outer loop's registers do not give");
    /** An item's kind for an inner loop's whole run (a nest), and a loop record's type bit for such an inner loop. */
    static final int KIND_NESTED = 4, TYPE_NESTED = 0x80;

    /**
     * One body position at link-time addresses; {@code kind} 0 is a logged site, 1–3 a computed access;
     * {@code cond} 0 when it runs every iteration, m+1 when it runs in the iterations marker m names,
     * {@link #OPTIONAL} for a logged position that runs when its record says so; {@code call}: a call's site, after
     * whose record the callee's own records come, up to the loop's next one.
     */
    public record Item(long insn, int kind, int size, int access, int flags, int weightMa, int weightAia, int blockRefs,
                int blockMa, int blockAia, int baseSlot, int indexSlot, int scale, int phase, int cond, long displacement,
                boolean call) {
        public boolean computed() { return kind != 0 && kind != KIND_NESTED; }

        /** Whether the position is an inner loop's whole run, which {@link Loop#nests()} describes. */
        public boolean nested() { return kind == KIND_NESTED; }
    }

    /**
     * A value an outer loop computes for an inner one: {@code constant + Σ factors[j] × r(slots[j])}, where
     * {@code r(s)} is the outer loop's slot s at the start of its iteration k: its entry value plus k times its step.
     */
    public record Affine(long constant, int[] slots, long[] factors) {
    }

    /**
     * An inner loop run whole at body position {@code item} of every iteration of its outer loop, with no records
     * of its own: its slots' entry values and its trip register's final value computed from the outer loop's.
     */
    public record Nest(int item, Loop inner, Affine[] entry, Affine exit) {
    }

    /**
     * A loop at link-time addresses; {@code entry} is the address its entry sites name in their {@code insn},
     * the exit site and the markers name their own; {@code mayBeEmpty} (record type 3): a run may end
     * before the first iteration's body (the loop is entered at its test). Marker m opens a conditional block at body position
     * {@code markerPos[m]}; {@code markerPhase[m]}: the trip register's update comes before it in the body; {@code markerEnds[m]}: it is
     * a side exit's (a {@code break}), the run ends before body position {@code markerPos[m]}. {@code registers}: the
     * name of each slot's register, as the rewriter wrote it. {@code entryItem} (record type 5): the body position a
     * run's first iteration starts at, the loop being entered in the middle of its body; {@code entryMask}: the
     * slots whose update comes before that position, which the first iteration does not run.
     */
    public record Loop(long entry, long[] steps, int[] stepSlots, int tripSlot, List<Item> items, long[] markers, int[] markerPos,
                       boolean[] markerPhase, boolean[] markerEnds, boolean mayBeEmpty, List<String> registers, int exitItem,
                       boolean tripBeforeExit, int entryItem, int entryMask, List<Nest> nests, Condition[] conditions) {
        /** A loop without computed conditions. */
        public Loop(long entry, long[] steps, int[] stepSlots, int tripSlot, List<Item> items, long[] markers, int[] markerPos,
                    boolean[] markerPhase, boolean[] markerEnds, boolean mayBeEmpty, List<String> registers, int exitItem,
                    boolean tripBeforeExit, int entryItem, int entryMask, List<Nest> nests) {
            this(entry, steps, stepSlots, tripSlot, items, markers, markerPos, markerPhase, markerEnds, mayBeEmpty, registers,
                    exitItem, tripBeforeExit, entryItem, entryMask, nests, new Condition[markers.length]);
        }

        /** A loop whose test comes first in its body, or last: the run's last iteration ends at the test. */
        public Loop(long entry, long[] steps, int[] stepSlots, int tripSlot, List<Item> items, long[] markers, int[] markerPos,
                    boolean[] markerPhase, boolean[] markerEnds, boolean mayBeEmpty, List<String> registers) {
            this(entry, steps, stepSlots, tripSlot, items, markers, markerPos, markerPhase, markerEnds, mayBeEmpty, registers, 0, false, 0, 0, List.of());
        }

        /** The nest at body position {@code item}, or null. */
        public Nest nestAt(int item) {
            for (Nest n : nests) if (n.item() == item) return n;
            return null;
        }

        /**
         * The value slot {@code slot}'s register would have had at a whole first iteration's start, from the one it
         * had at the entry ({@code entry}) and its step: one step back when the partial first iteration of a loop
         * entered in the middle skips its update. Every replay counts from these, so the first iteration is
         * iteration 0 like any other, begun at {@link #entryItem}.
         */
        public long wholeIterationStart(int slot, long entry, long step) {
            return (entryMask >>> slot & 1) != 0 ? entry - step : entry;
        }
    }

    private final Map<Long, Loop> byEntry;
    private final Map<String, Long> declined;
    /** Every loop of the file, those an outer loop runs too (which no record names). */
    private final List<Loop> all;

    private SkeletonTable(Map<Long, Loop> byEntry, Map<String, Long> declined, List<Loop> all) {
        this.byEntry = byEntry;
        this.declined = declined;
        this.all = all;
    }

    static final SkeletonTable EMPTY = new SkeletonTable(Map.of(), Map.of(), List.of());

    /** The file's skeleton; {@link #EMPTY} when it has none. */
    static SkeletonTable of(ElfFile elf) throws MtrFormatException {
        ElfSection section = elf.section(SECTION).orElse(null);
        if (section == null) return EMPTY;
        byte[] bytes;
        try {
            bytes = elf.contents(section);
        } catch (ElfFormatException e) {
            throw new MtrFormatException(elf.path() + ": " + e.getMessage());
        }
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        Map<Long, Loop> loops = new HashMap<>();
        Map<String, Long> declined = new LinkedHashMap<>();
        List<Loop> all = new ArrayList<>(); // by record number across the section (a nest's item counts within its part)
        Map<Integer, Affine[]> computedValues = new HashMap<>(); // a nested loop's values, by its number
        var runBy = new HashMap<Integer, Integer>(); // a nested loop's outer loop
        int at = 0;
        int partStart = 0; // the first loop record of the part being read, from which a nest's number counts
        try {
            while (at < bytes.length) {
                long here = section.address() + at;
                int type = Byte.toUnsignedInt(b.get(at));
                if (type == SkeletonParts.VERSION_RECORD) { // the version of the records that follow (an object file's part)
                    int version = Byte.toUnsignedInt(b.get(at + 1));
                    if (version < 1 || version > VERSION)
                        throw new MtrFormatException(elf.path() + ": " + SECTION + " version " + version + " (this memtrace reads up to " + VERSION + "): rebuild with this memtrace or read with a newer one");
                    partStart = all.size();
                    at += 8;
                    continue;
                }
                boolean nested = (type & TYPE_NESTED) != 0;
                type &= ~TYPE_NESTED;
                if (type == 2 && !nested) {
                    int reason = Byte.toUnsignedInt(b.get(at + 1));
                    declined.merge(reason < REASONS.size() ? REASONS.get(reason) : "reason " + reason, 1L, Long::sum);
                    at += 8;
                    continue;
                }
                if (type < 1 || type > 5) throw new MtrFormatException(elf.path() + ": " + SECTION + " record of type " + type);
                int slots = Byte.toUnsignedInt(b.get(at + 1));
                int trip = Byte.toUnsignedInt(b.get(at + 2));
                int markers = Byte.toUnsignedInt(b.get(at + 3));
                int items = b.getInt(at + 4);
                long entry = here + 8 + b.getInt(at + 8);
                long exit = here + 12 + b.getInt(at + 12);
                long[] steps = new long[slots];
                int[] stepSlots = new int[slots];
                List<String> registers = new ArrayList<>(slots);
                int p = at + 16;
                for (int s = 0; s < slots; s++, p += 16) {
                    steps[s] = b.getLong(p);
                    stepSlots[s] = Byte.toUnsignedInt(b.get(p + 8));
                    registers.add(name(bytes, p + 9));
                    if (stepSlots[s] != NONE && stepSlots[s] >= slots)
                        throw new MtrFormatException(elf.path() + ": a " + SECTION + " step names a register the loop does not log");
                }
                if (trip >= slots || items < 0 || p + (long) items * ITEM_SIZE + (long) markers * MARKER_SIZE > bytes.length)
                    throw new MtrFormatException(elf.path() + ": a " + SECTION + " loop record makes no sense");
                List<Item> list = new ArrayList<>(items);
                for (int i = 0; i < items; i++, p += ITEM_SIZE) {
                    long insn = section.address() + p + b.getInt(p);
                    list.add(new Item(insn, Byte.toUnsignedInt(b.get(p + 4)), Byte.toUnsignedInt(b.get(p + 5)),
                            Byte.toUnsignedInt(b.get(p + 6)), Byte.toUnsignedInt(b.get(p + 7)), u16(b, p + 8),
                            u16(b, p + 10), u16(b, p + 12), u16(b, p + 14), u16(b, p + 16), Byte.toUnsignedInt(b.get(p + 18)),
                            Byte.toUnsignedInt(b.get(p + 19)), Byte.toUnsignedInt(b.get(p + 20)), Byte.toUnsignedInt(b.get(p + 21)),
                            Byte.toUnsignedInt(b.get(p + 22)), b.getLong(p + 24), (b.get(p + 23) & 1) != 0));
                }
                long[] markerAt = new long[markers];
                int[] markerPos = new int[markers];
                boolean[] markerPhase = new boolean[markers];
                boolean[] markerEnds = new boolean[markers];
                boolean[] computedAt = new boolean[markers];
                for (int m = 0; m < markers; m++, p += MARKER_SIZE) {
                    markerAt[m] = section.address() + p + b.getInt(p);
                    markerPos[m] = u16(b, p + 4);
                    markerPhase[m] = b.get(p + 6) != 0;
                    computedAt[m] = b.get(p + 7) == MARKER_COMPUTED;
                    markerEnds[m] = b.get(p + 7) != 0 && !computedAt[m];
                    if (markerPos[m] > items || markerPos[m] == items && !markerEnds[m])
                        throw new MtrFormatException(elf.path() + ": a " + SECTION + " marker lies outside its loop's body");
                }
                for (Item item : list) {
                    if ((item.baseSlot() != NONE && item.baseSlot() >= slots) || (item.indexSlot() != NONE && item.indexSlot() >= slots))
                        throw new MtrFormatException(elf.path() + ": a " + SECTION + " item names a register the loop does not log");
                    if (item.cond() != 0 && item.cond() != OPTIONAL && item.cond() > markers)
                        throw new MtrFormatException(elf.path() + ": a " + SECTION + " item names a marker the loop does not have");
                }
                var nests = new ArrayList<Nest>();
                for (int i = 0; i < list.size(); i++) {
                    if (!list.get(i).nested()) continue;
                    int inner = SkeletonParts.loop(list.get(i).displacement(), partStart, all.size());
                    if (inner < 0 || !computedValues.containsKey(inner) || runBy.putIfAbsent(inner, all.size()) != null)
                        throw new MtrFormatException(elf.path() + ": a " + SECTION + " nest names no inner loop of its own");
                    Affine[] values = computedValues.get(inner);
                    for (Affine a : values) for (int s : a.slots()) if (s >= slots)
                        throw new MtrFormatException(elf.path() + ": a " + SECTION + " nest names a register the outer loop does not log");
                    nests.add(new Nest(i, all.get(inner), java.util.Arrays.copyOf(values, values.length - 1), values[values.length - 1]));
                }
                int exitItem = 0, entryItem = 0, entryMask = 0;
                boolean tripBeforeExit = false;
                if (type >= 4) { // tested at the top below code the last iteration runs: u16 items before the test, u8 trip updated before it
                    exitItem = u16(b, p);
                    tripBeforeExit = b.get(p + 2) != 0;
                    if (type == 5) { // entered in the middle: u16 the position the first iteration starts at, u16 slots updated before it
                        entryItem = u16(b, p + 4);
                        entryMask = u16(b, p + 6);
                    }
                    p += 8;
                    if (exitItem > items) throw new MtrFormatException(elf.path() + ": a " + SECTION + " loop's test lies past its body");
                    if (entryItem > items || entryMask >>> slots != 0)
                        throw new MtrFormatException(elf.path() + ": a " + SECTION + " loop's entry lies outside its body");
                }
                Condition[] conditions = new Condition[markers];
                for (int m = 0; m < markers; m++) {
                    if (!computedAt[m]) continue;
                    List<Condition> terms = new ArrayList<>();
                    boolean more = true;
                    for (; more; p += CONDITION_SIZE) { // byte 7 set: the next entry is and-ed with this one
                        Condition c = new Condition(Byte.toUnsignedInt(b.get(p)), Byte.toUnsignedInt(b.get(p + 1)),
                                Byte.toUnsignedInt(b.get(p + 2)), b.get(p + 3) != 0, Byte.toUnsignedInt(b.get(p + 4)),
                                Byte.toUnsignedInt(b.get(p + 5)), b.getLong(p + 8), b.getLong(p + 16), Byte.toUnsignedInt(b.get(p + 6)));
                        more = b.get(p + 7) != 0;
                        if (c.op() < Condition.CMP || c.op() > Condition.TEST || Integer.bitCount(c.width()) != 1 || c.width() > 8
                                || !Condition.known(c.cc()) || c.slotA() != NONE && c.slotA() >= slots || c.slotB() != NONE && c.slotB() >= slots
                                || terms.size() == MAX_TERMS)
                            throw new MtrFormatException(elf.path() + ": a " + SECTION + " computed condition makes no sense");
                        terms.add(c);
                    }
                    Condition chain = null;
                    for (Condition c : terms.reversed())
                        chain = new Condition(c.op(), c.width(), c.cc(), c.whenTaken(), c.slotA(), c.slotB(), c.immA(), c.immB(), c.phase(), chain);
                    conditions[m] = chain;
                }
                if (nested) { // the values its outer loop computes: its slots' entry values, then the trip register's final one
                    Affine[] values = new Affine[slots + 1];
                    for (int v = 0; v <= slots; v++) {
                        long constant = b.getLong(p);
                        int terms = Byte.toUnsignedInt(b.get(p + 8));
                        p += 16;
                        int[] termSlots = new int[terms];
                        long[] factors = new long[terms];
                        for (int j = 0; j < terms; j++, p += 16) {
                            factors[j] = b.getLong(p);
                            termSlots[j] = Byte.toUnsignedInt(b.get(p + 8));
                        }
                        values[v] = new Affine(constant, termSlots, factors);
                    }
                    computedValues.put(all.size(), values);
                }
                Loop loop = new Loop(entry, steps, stepSlots, trip, List.copyOf(list), markerAt, markerPos, markerPhase, markerEnds,
                        type == 3 || type == 4, List.copyOf(registers), exitItem, tripBeforeExit, entryItem, entryMask, List.copyOf(nests),
                        conditions);
                all.add(loop);
                at = p;
                if (nested) continue; // no record names it: its outer loop runs it
                loops.put(entry, loop);
                loops.put(exit, loop);
                for (int m = 0; m < markers; m++) if (conditions[m] == null) loops.put(markerAt[m], loop);
            }
        } catch (IndexOutOfBoundsException e) {
            throw new MtrFormatException(elf.path() + ": the " + SECTION + " section is cut short");
        }
        if (runBy.size() != computedValues.size())
            throw new MtrFormatException(elf.path() + ": a " + SECTION + " nested loop has no outer loop");
        return new SkeletonTable(loops, declined, List.copyOf(all));
    }

    private static int u16(ByteBuffer b, int at) { return Short.toUnsignedInt(b.getShort(at)); }

    /** A slot's register name: up to 7 bytes, zero padded. */
    private static String name(byte[] bytes, int at) {
        int n = 0;
        while (n < 7 && bytes[at + n] != 0) n++;
        return new String(bytes, at, n, java.nio.charset.StandardCharsets.US_ASCII);
    }

    /** The loop whose entry, exit or marker probe ends at {@code label} (what its sites' {@code insn} names). */
    Loop loop(long label) { return byEntry.get(label); }

    /** Declined loops by reason, as the rewriter counted them in this file. */
    Map<String, Long> declined() { return declined; }

    /** The block sums of the computed accesses that open a block, for the module's selection totals. */
    long[] blockSums() {
        long refs = 0, ma = 0, aia = 0;
        for (Loop loop : all) {
            for (Item i : loop.items()) {
                if (!i.computed() || (i.flags() & Event.ProbeSite.FIRST_OF_BLOCK) == 0) continue;
                refs += i.blockRefs();
                ma += i.blockMa();
                aia += i.blockAia();
            }
        }
        return new long[] {refs, ma, aia};
    }

    /**
     * A loop placed at a load bias: the sites of its computed accesses (flagged {@link Event.ProbeSite#COMPUTED})
     * and the run-time instruction address each logged record must have. {@code plain}: every position is
     * computed and runs every iteration. {@code call[i]}: position i is a call's; {@code own}: the instructions of
     * the logged positions, sorted, which tell the loop's records from those of the functions it calls.
     */
    record Placed(long[] steps, int[] stepSlots, int tripSlot, int[] baseSlot, int[] indexSlot, int[] scale, int[] phase,
                  long[] displacement, Event.ProbeSite[] sites, long[] loggedIp, boolean anyLogged, int[] cond,
                  int[] markerPos, boolean[] markerPhase, boolean[] markerEnds, boolean plain, boolean mayBeEmpty,
                  boolean[] call, long[] own, int exitItem, boolean tripBeforeExit, int entryItem, int entryMask, Nest[] nest,
                  Placed[] inner, Condition[] conditions) {
        /** A loop without inner loops run whole nor computed conditions. */
        Placed(long[] steps, int[] stepSlots, int tripSlot, int[] baseSlot, int[] indexSlot, int[] scale, int[] phase,
               long[] displacement, Event.ProbeSite[] sites, long[] loggedIp, boolean anyLogged, int[] cond,
               int[] markerPos, boolean[] markerPhase, boolean[] markerEnds, boolean plain, boolean mayBeEmpty,
               boolean[] call, long[] own, int exitItem, boolean tripBeforeExit, int entryItem, int entryMask) {
            this(steps, stepSlots, tripSlot, baseSlot, indexSlot, scale, phase, displacement, sites, loggedIp, anyLogged, cond,
                    markerPos, markerPhase, markerEnds, plain, mayBeEmpty, call, own, exitItem, tripBeforeExit, entryItem, entryMask,
                    new Nest[sites.length], new Placed[sites.length], new Condition[markerPos.length]);
        }

        /** A loop without calls: its own records are all there are in a run. */
        Placed(long[] steps, int[] stepSlots, int tripSlot, int[] baseSlot, int[] indexSlot, int[] scale, int[] phase,
               long[] displacement, Event.ProbeSite[] sites, long[] loggedIp, boolean anyLogged, int[] cond,
               int[] markerPos, boolean[] markerPhase, boolean[] markerEnds, boolean plain, boolean mayBeEmpty) {
            this(steps, stepSlots, tripSlot, baseSlot, indexSlot, scale, phase, displacement, sites, loggedIp, anyLogged, cond,
                    markerPos, markerPhase, markerEnds, plain, mayBeEmpty, new boolean[sites.length], own(sites, loggedIp), 0, false, 0, 0);
        }

        private static long[] own(Event.ProbeSite[] sites, long[] ip) {
            return IntStream.range(0, sites.length).filter(i -> sites[i] == null).mapToLong(i -> ip[i]).sorted().toArray();
        }

        static Placed of(Loop loop, long bias, Event.SelectionTotals totals) {
            int n = loop.items().size();
            int[] base = new int[n], index = new int[n], scale = new int[n], phase = new int[n], cond = new int[n];
            boolean plain = true;
            long[] disp = new long[n], ip = new long[n];
            Event.ProbeSite[] sites = new Event.ProbeSite[n];
            boolean logged = false;
            boolean[] call = new boolean[n];
            Nest[] nest = new Nest[n];
            Placed[] inner = new Placed[n];
            for (int i = 0; i < n; i++) {
                Item it = loop.items().get(i);
                if (it.nested()) { // the inner loop's run: no site, no record
                    nest[i] = loop.nestAt(i);
                    inner[i] = of(nest[i].inner(), bias, totals);
                    plain = false;
                    continue;
                }
                base[i] = it.baseSlot();
                index[i] = it.indexSlot();
                scale[i] = it.scale();
                phase[i] = it.phase();
                disp[i] = it.displacement();
                cond[i] = it.cond();
                call[i] = it.call();
                plain &= it.computed() && it.cond() == 0;
                ip[i] = it.insn() + bias;
                if (it.computed()) {
                    Event.ProbeKind kind = it.kind() == SiteTable.KIND_LOAD ? Event.ProbeKind.LOAD
                            : it.kind() == SiteTable.KIND_STORE ? Event.ProbeKind.STORE : Event.ProbeKind.MODIFY;
                    sites[i] = new Event.ProbeSite(ip[i], kind, it.size(), it.access(), it.flags() | Event.ProbeSite.COMPUTED,
                            it.weightMa(), it.weightAia(), it.blockRefs(), it.blockMa(), it.blockAia(), totals);
                } else {
                    logged = true;
                }
            }
            long[] own = IntStream.range(0, n).filter(i -> sites[i] == null && nest[i] == null).mapToLong(i -> ip[i]).sorted().toArray();
            return new Placed(loop.steps(), loop.stepSlots(), loop.tripSlot(), base, index, scale, phase, disp, sites, ip, logged,
                    cond, loop.markerPos(), loop.markerPhase(), loop.markerEnds(), plain, loop.mayBeEmpty(), call, own,
                    loop.exitItem(), loop.tripBeforeExit(), loop.entryItem(), loop.entryMask(), nest, inner, loop.conditions());
        }

        int items() { return sites.length; }
    }
}
