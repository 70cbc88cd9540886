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
import org.memtrace.format.SiteFormat;
import org.memtrace.format.SkeletonEntries;
import org.memtrace.format.SkeletonFormat;
import org.memtrace.format.SkeletonFormat.Condition;
import org.memtrace.format.SkeletonParts;
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
    static final String SECTION = SkeletonFormat.SECTION;
    /** An item's {@code cond}: a logged position of a block that may not run, told by its record alone. */
    public static final int OPTIONAL = SkeletonFormat.OPTIONAL;
    /** A slot field naming no register (an item's index, a step's slot). */
    public static final int NONE = SkeletonFormat.NONE;

    /**
     * One body position at link-time addresses; {@code kind} 0 is a logged site, 1–3 a computed access;
     * {@code cond} 0 when it runs every iteration, m+1 when it runs in the iterations marker m names,
     * {@link #OPTIONAL} for a logged position that runs when its record says so; {@code call}: a call's site, after
     * whose record the callee's own records come, up to the loop's next one.
     */
    public record Item(long insn, int kind, int size, int access, int flags, int weightMa, int weightAia, int blockRefs,
                int blockMa, int blockAia, int baseSlot, int indexSlot, int scale, int phase, int cond, long displacement,
                boolean call) {
        public boolean computed() { return kind != SkeletonFormat.ITEM_LOGGED && kind != SkeletonFormat.ITEM_NESTED; }

        /** Whether the position is an inner loop's whole run, which {@link Loop#nests()} describes. */
        public boolean nested() { return kind == SkeletonFormat.ITEM_NESTED; }
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
                int type = Byte.toUnsignedInt(b.get(at));
                if (type == SkeletonParts.VERSION_RECORD) { // the version of the records that follow (an object file's part)
                    int version = Byte.toUnsignedInt(b.get(at + 1));
                    if (version < SkeletonFormat.VERSION_1 || version > SkeletonFormat.VERSION)
                        throw new MtrFormatException(elf.path() + ": " + SECTION + " version " + version + " (this memtrace reads up to " + SkeletonFormat.VERSION + "): rebuild with this memtrace or read with a newer one");
                    partStart = all.size();
                    at += SkeletonFormat.VERSION_SIZE;
                    continue;
                }
                boolean nested = (type & SkeletonFormat.RECORD_NESTED) != 0;
                type &= ~SkeletonFormat.RECORD_NESTED;
                if (type == SkeletonFormat.RECORD_DECLINED && !nested) {
                    declined.merge(SkeletonFormat.reason(Byte.toUnsignedInt(b.get(at + 1))), 1L, Long::sum);
                    at += SkeletonFormat.DECLINED_SIZE;
                    continue;
                }
                if (!SkeletonFormat.isLoop(type)) throw new MtrFormatException(elf.path() + ": " + SECTION + " record of type " + type);
                SkeletonEntries.Head head = SkeletonEntries.decodeHead(b, at, section.address());
                int slots = head.slots(), trip = head.tripSlot(), markers = head.markers(), items = head.items();
                long entry = head.entry(), exit = head.exit();
                long[] steps = new long[slots];
                int[] stepSlots = new int[slots];
                List<String> registers = new ArrayList<>(slots);
                int p = at + SkeletonFormat.LOOP_HEAD_SIZE;
                for (int s = 0; s < slots; s++, p += SkeletonFormat.SLOT_SIZE) {
                    SkeletonEntries.Slot slot = SkeletonEntries.decodeSlot(b, p);
                    steps[s] = slot.step();
                    stepSlots[s] = slot.stepSlot();
                    registers.add(slot.register());
                    if (stepSlots[s] != NONE && stepSlots[s] >= slots)
                        throw new MtrFormatException(elf.path() + ": a " + SECTION + " step names a register the loop does not log");
                }
                if (trip >= slots || items < 0 || p + (long) items * SkeletonFormat.ITEM_SIZE + (long) markers * SkeletonFormat.MARKER_SIZE > bytes.length)
                    throw new MtrFormatException(elf.path() + ": a " + SECTION + " loop record makes no sense");
                List<Item> list = new ArrayList<>(items);
                for (int i = 0; i < items; i++, p += SkeletonFormat.ITEM_SIZE) {
                    SkeletonEntries.Item e = SkeletonEntries.decodeItem(b, p, section.address());
                    list.add(new Item(e.instruction(), e.kind(), e.size(), e.access(), e.flags(), e.weightMa(), e.weightAia(),
                            e.blockRefs(), e.blockMa(), e.blockAia(), e.baseSlot(), e.indexSlot(), e.scale(), e.phase(), e.cond(),
                            e.displacement(), e.call()));
                }
                long[] markerAt = new long[markers];
                int[] markerPos = new int[markers];
                boolean[] markerPhase = new boolean[markers];
                boolean[] markerEnds = new boolean[markers];
                boolean[] computedAt = new boolean[markers];
                for (int m = 0; m < markers; m++, p += SkeletonFormat.MARKER_SIZE) {
                    SkeletonEntries.Marker marker = SkeletonEntries.decodeMarker(b, p, section.address());
                    markerAt[m] = marker.probe();
                    markerPos[m] = marker.item();
                    markerPhase[m] = marker.phase();
                    computedAt[m] = marker.kind() == SkeletonFormat.MARKER_COMPUTED;
                    markerEnds[m] = marker.kind() != SkeletonFormat.MARKER_BLOCK && !computedAt[m];
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
                if (SkeletonFormat.hasTail(type)) { // tested at the top below code the last iteration runs: u16 items before the test, u8 trip updated before it
                    SkeletonEntries.Tail tail = SkeletonEntries.decodeTail(b, p);
                    exitItem = tail.exitItem();
                    tripBeforeExit = tail.tripBeforeExit();
                    if (type == SkeletonFormat.RECORD_LOOP_ENTERED_MID) { // entered in the middle: the position the first iteration starts at, the slots updated before it
                        entryItem = tail.entryItem();
                        entryMask = tail.entryMask();
                    }
                    p += SkeletonFormat.TAIL_SIZE;
                    if (exitItem > items) throw new MtrFormatException(elf.path() + ": a " + SECTION + " loop's test lies past its body");
                    if (entryItem > items || entryMask >>> slots != 0)
                        throw new MtrFormatException(elf.path() + ": a " + SECTION + " loop's entry lies outside its body");
                }
                Condition[] conditions = new Condition[markers];
                for (int m = 0; m < markers; m++) {
                    if (!computedAt[m]) continue;
                    SkeletonFormat.Read read = SkeletonFormat.decodeCondition(b, p, slots);
                    if (read == null) throw new MtrFormatException(elf.path() + ": a " + SECTION + " computed condition makes no sense");
                    p = read.end();
                    conditions[m] = read.condition();
                }
                if (nested) { // the values its outer loop computes: its slots' entry values, then the trip register's final one
                    Affine[] values = new Affine[slots + 1];
                    for (int v = 0; v <= slots; v++) {
                        SkeletonEntries.Value value = SkeletonEntries.decodeValue(b, p);
                        p += value.size();
                        values[v] = new Affine(value.constant(), value.slots(), value.factors());
                    }
                    computedValues.put(all.size(), values);
                }
                Loop loop = new Loop(entry, steps, stepSlots, trip, List.copyOf(list), markerAt, markerPos, markerPhase, markerEnds,
                        SkeletonFormat.mayBeEmpty(type), List.copyOf(registers), exitItem, tripBeforeExit, entryItem, entryMask, List.copyOf(nests),
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
                    Event.ProbeKind kind = it.kind() == SiteFormat.LOAD ? Event.ProbeKind.LOAD
                            : it.kind() == SiteFormat.STORE ? Event.ProbeKind.STORE : Event.ProbeKind.MODIFY;
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
