package org.memtrace.mtr;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.memtrace.event.Event;
import org.memtrace.format.SiteFormat;
import org.memtrace.format.SiteFormat.Entry;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfFormatException;
import org.memtrace.symbols.ElfSection;

/**
 * The {@code memtrace_sites} section of one instrumented ELF file, parsed into sites at link-time
 * addresses (docs/compiled-in.md, "The site table"). {@link #placeAt} places them at a load bias.
 */
final class SiteTable {
    static final String SECTION = SiteFormat.SECTION;
    static final int ENTRY_SIZE = SiteFormat.ENTRY_SIZE;

    static final int KIND_LOAD = SiteFormat.LOAD, KIND_STORE = SiteFormat.STORE, KIND_MODIFY = SiteFormat.MODIFY,
            KIND_REP_DESTINATION = SiteFormat.REP_DESTINATION, KIND_REP_SOURCE = SiteFormat.REP_SOURCE, KIND_REP_COUNT = SiteFormat.REP_COUNT;

    /** A rep string instruction's operation, from its opcode (the site table does not say). */
    enum RepOp { MOVS, STOS, LODS, CMPS, SCAS }

    /** What a site's record means, at run-time addresses. */
    sealed interface Site permits Access, Rep, LoopValue, LoopExit, LoopMarker, Relaxed {}

    /**
     * An access the linker took away (docs/compiled-in.md, "Accesses the link may take away"): the push of a
     * TLS resolver call it relaxed into thread-pointer arithmetic, or a {@code @GOTPCREL} load it relaxed into
     * a {@code lea} or an immediate. Its records are dropped, the access never happened.
     */
    record Relaxed() implements Site {}

    /**
     * Site flag: an access the link may take away, kept only where the linked bytes at the instruction still do
     * it ({@link #stillAccesses}).
     */
    static final int FLAG_KEPT_WHERE_LINKED = SiteFormat.FLAG_KEPT_WHERE_LINKED;

    /**
     * A skeleton loop's entry record: the value of the loop's register {@code slot}; {@code source} the loop as
     * its file describes it, loaded at {@code bias}.
     */
    record LoopValue(SkeletonTable.Placed loop, int slot, SkeletonTable.Loop source, long bias) implements Site {}

    /** A skeleton loop's exit record: the final value of its trip register. */
    record LoopExit(SkeletonTable.Placed loop) implements Site {}

    /** A skeleton loop's marker {@code marker}: a conditional block runs, in the iteration the trip register's value tells. */
    record LoopMarker(SkeletonTable.Placed loop, int marker) implements Site {}

    /** An access site: each record is one {@link Event.Probe}. */
    record Access(Event.ProbeSite site) implements Site {}

    /**
     * One operand record of a rep string instruction: {@code role} is 4 destination, 5 source or 6 count;
     * {@code roles} the bit set (1 << role) of every record the instruction writes, so the reader knows when
     * it has them all.
     */
    record Rep(long ip, int role, int roles, int size, RepOp op, boolean conditional) implements Site {}


    private final List<Entry> entries;
    /** Probe addresses of flag-0x40 sites whose access the link took away. */
    private final List<Long> relaxed;
    private final Map<Long, Integer> repRoles;
    private final Map<Long, RepOp> repOps;
    private final Event.SelectionTotals totals;
    private final SkeletonTable skeleton;
    /**
     * Every probe address (link-time), ascending, and the entry each names ({@link #RELAXED}: a relaxed site);
     * one entry an address, the one the section lists last.
     */
    private final long[] probes;
    private final int[] probeEntry;
    private static final int RELAXED = -1;

    private SiteTable(List<Entry> entries, List<Long> relaxed, Map<Long, Integer> repRoles, Map<Long, RepOp> repOps,
                      SkeletonTable skeleton) {
        this.entries = entries;
        this.relaxed = relaxed;
        this.repRoles = repRoles;
        this.repOps = repOps;
        this.skeleton = skeleton;
        long[] computed = skeleton.blockSums();
        long refs = computed[0], ma = computed[1], aia = computed[2];
        java.util.Set<Long> summed = new java.util.HashSet<>();
        for (Entry e : entries) {
            if ((e.flags() & Event.ProbeSite.FIRST_OF_BLOCK) == 0) continue; // one entry per block carries its sums
            // once per instruction: a rewritten module's trampoline tails probe an instruction a second time
            if (!summed.add(e.insn())) continue;
            refs += e.blockRefs();
            ma += e.blockMa();
            aia += e.blockAia();
        }
        this.totals = new Event.SelectionTotals(refs, ma, aia);
        // in the order a placement used to put them into one map, so that the last one at an address still wins
        int n = relaxed.size() + entries.size();
        long[] keys = new long[n];
        int[] which = new int[n];
        for (int i = 0; i < relaxed.size(); i++) {
            keys[i] = relaxed.get(i);
            which[i] = RELAXED;
        }
        for (int i = 0; i < entries.size(); i++) {
            keys[relaxed.size() + i] = entries.get(i).probe();
            which[relaxed.size() + i] = i;
        }
        boolean ascending = true;
        for (int i = 1; i < n && ascending; i++) ascending = keys[i - 1] < keys[i];
        if (!ascending) { // the linker keeps each object's table in order; relaxed sites and several objects interleave
            long[] sorted = sortedKeepingLast(keys, which);
            int m = sorted.length / 2;
            this.probes = Arrays.copyOf(sorted, m);
            this.probeEntry = new int[m];
            for (int i = 0; i < m; i++) probeEntry[i] = (int) sorted[m + i];
        } else {
            this.probes = keys;
            this.probeEntry = which;
        }
    }

    /** The file's site table; null when the file has no {@code memtrace_sites} section (not built by memtrace cc). */
    static SiteTable of(ElfFile elf) throws MtrFormatException {
        ElfSection section = elf.section(SECTION).orElse(null);
        if (section == null) return null;
        byte[] bytes;
        try {
            bytes = elf.contents(section);
        } catch (ElfFormatException e) {
            throw new MtrFormatException(elf.path() + ": " + e.getMessage());
        }
        if (bytes.length % ENTRY_SIZE != 0)
            throw new MtrFormatException(elf.path() + ": the " + SECTION + " section is " + bytes.length + " bytes, not whole 24-byte entries");
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        List<Entry> entries = new ArrayList<>(bytes.length / ENTRY_SIZE);
        List<Long> relaxed = new ArrayList<>();
        Map<Long, Integer> repRoles = new HashMap<>();
        for (int at = 0; at < bytes.length; at += ENTRY_SIZE) {
            Entry e = SiteFormat.decode(b, at, section.address());
            int kind = e.kind();
            if (kind < SiteFormat.FIRST_KIND || kind > SiteFormat.LAST_KIND)
                throw new MtrFormatException(elf.path() + ": site table entry " + at / ENTRY_SIZE + " has unknown kind " + kind);
            if ((e.flags() & FLAG_KEPT_WHERE_LINKED) != 0 && !stillAccesses(kind, elf.bytesAt(e.insn(), 15))) {
                relaxed.add(e.probe());
                continue;
            }
            entries.add(e);
            if (SiteFormat.rep(kind)) repRoles.merge(e.insn(), 1 << kind, (x, y) -> x | y);
        }
        Map<Long, RepOp> repOps = new HashMap<>();
        repRoles.forEach((insn, roles) -> repOps.put(insn, repOp(elf.bytesAt(insn, 15), roles)));
        SkeletonTable skeleton = SkeletonTable.of(elf);
        for (Entry e : entries) {
            if (SiteFormat.skeleton(e.kind()) && skeleton.loop(e.insn()) == null)
                throw new MtrFormatException(elf.path() + ": a skeleton site names no loop of the " + SkeletonTable.SECTION + " section");
            if (e.kind() == SiteFormat.MARKER && e.access() >= skeleton.loop(e.insn()).markers().length)
                throw new MtrFormatException(elf.path() + ": a skeleton marker site names no marker of its loop");
        }
        return new SiteTable(List.copyOf(entries), List.copyOf(relaxed), repRoles, repOps, skeleton);
    }

    /**
     * Whether the linked bytes {@code code} of a flag-0x40 site's instruction still do its access: a load site
     * is a {@code @GOTPCREL} load, a store site the push of a TLS resolver call.
     */
    static boolean stillAccesses(int kind, ByteBuffer code) {
        return kind == KIND_LOAD ? isRipLoad(code) : isCall(code);
    }

    /**
     * Whether {@code code} reads a RIP-relative slot: {@code mov disp32(%rip),reg} ({@code 8b}, ModRM mod 0
     * rm 5, after a REX prefix), a {@code @GOTPCREL} load the linker kept (relaxed, it is a {@code lea},
     * {@code 8d}, or {@code mov $imm}, {@code c7}), or {@code call/jmp *disp32(%rip)} ({@code ff /2}, {@code
     * ff /4}), a {@code -fno-plt} call the linker kept (relaxed, it is {@code addr32 call} or {@code jmp} rel32).
     */
    static boolean isRipLoad(ByteBuffer code) {
        while (code.hasRemaining()) {
            int op = Byte.toUnsignedInt(code.get());
            if ((op & 0xf0) == 0x40) continue;
            if (!code.hasRemaining()) return false;
            int modrm = Byte.toUnsignedInt(code.get());
            int reg = modrm >> 3 & 7;
            return (modrm & 0xc7) == 0x05 && (op == 0x8b || op == 0xff && (reg == 2 || reg == 4));
        }
        return false;
    }

    /**
     * Whether {@code code} starts with a call ({@code e8}, or {@code ff /2}) after operand-size and REX
     * prefixes: what a TLS resolver call's bytes hold where the linker kept it; relaxed, they are
     * thread-pointer arithmetic or a nop.
     */
    static boolean isCall(ByteBuffer code) {
        while (code.hasRemaining()) {
            int op = Byte.toUnsignedInt(code.get());
            if (op == 0x66 || (op & 0xf0) == 0x40) continue;
            return op == 0xe8 || (op == 0xff && code.hasRemaining() && (Byte.toUnsignedInt(code.get()) >> 3 & 7) == 2);
        }
        return false;
    }

    /**
     * The operation from the opcode after the prefixes; without the bytes, from the operands the probe
     * recorded (destination and source: movs, destination: stos, source: lods).
     */
    static RepOp repOp(ByteBuffer code, int roles) {
        while (code.hasRemaining()) {
            int op = Byte.toUnsignedInt(code.get());
            boolean prefix = op == 0xf2 || op == 0xf3 || op == 0x66 || op == 0x67 || (op & 0xf0) == 0x40
                    || op == 0x26 || op == 0x2e || op == 0x36 || op == 0x3e || op == 0x64 || op == 0x65;
            if (prefix) continue;
            switch (op & 0xfe) {
                case 0xa4 -> { return RepOp.MOVS; }
                case 0xa6 -> { return RepOp.CMPS; }
                case 0xaa -> { return RepOp.STOS; }
                case 0xac -> { return RepOp.LODS; }
                case 0xae -> { return RepOp.SCAS; }
                default -> { }
            }
            break;
        }
        boolean dst = (roles & 1 << KIND_REP_DESTINATION) != 0;
        boolean src = (roles & 1 << KIND_REP_SOURCE) != 0;
        return dst && src ? RepOp.MOVS : dst ? RepOp.STOS : RepOp.LODS;
    }

    int size() { return entries.size(); }

    SkeletonTable skeleton() { return skeleton; }

    /**
     * The distinct keys ascending, then for each the value that came last with it: as one array, keys first.
     * Sorted as primitives (each key's offset from the smallest, shifted, with its position below), which
     * keeps equal keys in their order; boxed only when the keys span too much for that.
     */
    static long[] sortedKeepingLast(long[] keys, int[] values) {
        int n = keys.length;
        long min = Long.MAX_VALUE, max = Long.MIN_VALUE;
        for (long k : keys) {
            min = Math.min(min, k);
            max = Math.max(max, k);
        }
        int bits = 64 - Long.numberOfLeadingZeros(n);
        long[] order = new long[n];
        if (n > 0 && max - min >= 0 && max - min < 1L << (63 - bits)) {
            for (int i = 0; i < n; i++) order[i] = (keys[i] - min) << bits | i;
            Arrays.sort(order);
            for (int i = 0; i < n; i++) order[i] &= (1L << bits) - 1;
        } else {
            Integer[] boxed = new Integer[n];
            for (int i = 0; i < n; i++) boxed[i] = i;
            Arrays.sort(boxed, Comparator.comparingLong(i -> keys[i])); // stable
            for (int i = 0; i < n; i++) order[i] = boxed[i];
        }
        long[] k = new long[n];
        long[] v = new long[n];
        int m = 0;
        for (long o : order) {
            int i = (int) o;
            if (m > 0 && k[m - 1] == keys[i]) m--;
            k[m] = keys[i];
            v[m++] = values[i];
        }
        long[] out = Arrays.copyOf(k, 2 * m);
        System.arraycopy(v, 0, out, m, m);
        return out;
    }

    /** The table placed at {@code bias}: its sites by run-time probe address. */
    Placement placeAt(long bias) { return new Placement(bias, bias); }

    /**
     * The table of a rewritten module's trampoline file (docs/rewriting.md): its probes at {@code bias}, where
     * the runtime mapped the trampolines, and the instructions they name at {@code insnBias}, the module's.
     */
    Placement placeAt(long bias, long insnBias) { return new Placement(bias, insnBias); }

    /**
     * The table loaded at one bias. A site is made when a record first names it, not when the module is
     * loaded: a run executes a fraction of a large program's sites (sqlite3: tens of thousands of the 92 k
     * it was built with), and making them all was most of a pass's fixed cost.
     */
    final class Placement {
        private final long bias, insnBias;
        private final Relaxed dropped = new Relaxed();
        /** The loop each skeleton site names, placed once for all its sites. */
        private final Map<Long, SkeletonTable.Placed> loops = new HashMap<>();

        private Placement(long bias, long insnBias) {
            this.bias = bias;
            this.insnBias = insnBias;
        }

        /** Whether a probe of this table is at run-time address {@code probe}. */
        boolean has(long probe) { return Arrays.binarySearch(probes, probe - bias) >= 0; }

        /** The site of the probe at run-time address {@code probe}, made anew each call; null when no probe is there. */
        Site site(long probe) {
            int at = Arrays.binarySearch(probes, probe - bias);
            if (at < 0) return null;
            int i = probeEntry[at];
            return i == RELAXED ? dropped : make(entries.get(i));
        }

        private Site make(Entry e) {
            long ip = e.insn() + insnBias;
            if (SiteFormat.skeleton(e.kind())) {
                SkeletonTable.Loop loop = skeleton.loop(e.insn());
                SkeletonTable.Placed placed = loops.computeIfAbsent(loop.entry(), x -> SkeletonTable.Placed.of(loop, bias, totals));
                return switch (e.kind()) {
                    case SiteFormat.VALUE -> new LoopValue(placed, e.access(), loop, bias);
                    case SiteFormat.EXIT -> new LoopExit(placed);
                    default -> new LoopMarker(placed, e.access());
                };
            }
            return switch (e.kind()) {
                case KIND_LOAD, KIND_STORE, KIND_MODIFY -> new Access(new Event.ProbeSite(ip,
                        e.kind() == KIND_LOAD ? Event.ProbeKind.LOAD : e.kind() == KIND_STORE ? Event.ProbeKind.STORE : Event.ProbeKind.MODIFY,
                        e.size(), e.access(), e.flags(), e.weightMa(), e.weightAia(), e.blockRefs(), e.blockMa(), e.blockAia(), totals));
                default -> new Rep(ip, e.kind(), repRoles.get(e.insn()), e.size(), repOps.get(e.insn()),
                        (e.flags() & Event.ProbeSite.CONDITIONAL_REP) != 0);
            };
        }
    }
}
