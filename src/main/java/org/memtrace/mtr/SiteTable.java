package org.memtrace.mtr;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HashMap;
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
     * it ({@link LinkedCode#stillAccesses}).
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


    /**
     * The section's bytes and link-time address: an entry is decoded when a record first names its probe
     * ({@link #entry}), not when the table is read. libc's trampoline file has 144 k entries, and making a
     * record of each on every run cost rewrite mode's start-up a fifth of a second of CPU and as much again
     * in garbage collection.
     */
    private final ByteBuffer raw;
    private final long address;
    /** The byte offset of each entry kept (not relaxed) in {@link #raw}, in the section's order. */
    private final int[] kept;
    private final Map<Long, Integer> repRoles;
    private final Map<Long, RepOp> repOps;
    private final Event.SelectionTotals totals;
    private final SkeletonTable skeleton;
    /**
     * Every probe address (link-time), ascending, and the entry each names (an index into {@link #kept};
     * {@link ProbeIndex#RELAXED}: a relaxed site); one entry an address, the one the section lists last.
     */
    private final long[] probes;
    private final int[] probeEntry;

    private SiteTable(ByteBuffer raw, long address, int[] kept, long[] relaxed, Map<Long, Integer> repRoles, Map<Long, RepOp> repOps,
                      SkeletonTable skeleton) {
        this.raw = raw;
        this.address = address;
        this.kept = kept;
        this.repRoles = repRoles;
        this.repOps = repOps;
        this.skeleton = skeleton;
        long[] computed = skeleton.blockSums();
        long refs = computed[0], ma = computed[1], aia = computed[2];
        LongSet summed = new LongSet(kept.length);
        for (int at : kept) {
            if ((u8(at + 11) & Event.ProbeSite.FIRST_OF_BLOCK) == 0) continue; // one entry per block carries its sums
            // once per instruction: a rewritten module's trampoline tails probe an instruction a second time
            if (!summed.add(insn(at))) continue;
            refs += u16(at + 16);
            ma += u16(at + 18);
            aia += u16(at + 20);
        }
        this.totals = new Event.SelectionTotals(refs, ma, aia);
        ProbeIndex index = ProbeIndex.of(relaxed, kept.length, i -> probe(kept[i]));
        this.probes = index.probes();
        this.probeEntry = index.entries();
    }

    private int u8(int at) { return Byte.toUnsignedInt(raw.get(at)); }

    private int u16(int at) { return Short.toUnsignedInt(raw.getShort(at)); }

    /** The link-time probe address of the entry at byte offset {@code at} (SiteFormat.decode's). */
    private long probe(int at) { return address + at + raw.getInt(at); }

    private long insn(int at) { return address + at + 4 + raw.getInt(at + 4); }

    /** The kept entry {@code i}, decoded. */
    private Entry entry(int i) { return SiteFormat.decode(raw, kept[i], address); }

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
        long address = section.address();
        int[] kept = new int[bytes.length / ENTRY_SIZE];
        int k = 0;
        long[] relaxed = new long[0];
        int r = 0;
        Map<Long, Integer> repRoles = new HashMap<>();
        boolean skeletal = false;
        for (int at = 0; at < bytes.length; at += ENTRY_SIZE) {
            int kind = Byte.toUnsignedInt(b.get(at + 8)), flags = Byte.toUnsignedInt(b.get(at + 11));
            if (kind < SiteFormat.FIRST_KIND || kind > SiteFormat.LAST_KIND)
                throw new MtrFormatException(elf.path() + ": site table entry " + at / ENTRY_SIZE + " has unknown kind " + kind);
            long here = address + at;
            if ((flags & FLAG_KEPT_WHERE_LINKED) != 0 && !LinkedCode.stillAccesses(kind, elf.bytesAt(here + 4 + b.getInt(at + 4), 15))) {
                if (r == relaxed.length) relaxed = Arrays.copyOf(relaxed, Math.max(16, 2 * r));
                relaxed[r++] = here + b.getInt(at);
                continue;
            }
            kept[k++] = at;
            if (SiteFormat.rep(kind)) repRoles.merge(here + 4 + b.getInt(at + 4), 1 << kind, (x, y) -> x | y);
            skeletal |= SiteFormat.skeleton(kind);
        }
        Map<Long, RepOp> repOps = new HashMap<>();
        repRoles.forEach((insn, roles) -> repOps.put(insn, LinkedCode.repOp(elf.bytesAt(insn, 15), roles)));
        SkeletonTable skeleton = SkeletonTable.of(elf);
        for (int i = 0; i < k && skeletal; i++) {
            Entry e = SiteFormat.decode(b, kept[i], address);
            if (SiteFormat.skeleton(e.kind()) && skeleton.loop(e.insn()) == null)
                throw new MtrFormatException(elf.path() + ": a skeleton site names no loop of the " + SkeletonTable.SECTION + " section");
            if (e.kind() == SiteFormat.MARKER && e.access() >= skeleton.loop(e.insn()).markers().length)
                throw new MtrFormatException(elf.path() + ": a skeleton marker site names no marker of its loop");
        }
        return new SiteTable(b, address, Arrays.copyOf(kept, k), Arrays.copyOf(relaxed, r), repRoles, repOps, skeleton);
    }

    /** A set of longs without boxing: the instructions whose block sums were counted. */
    private static final class LongSet {
        private final long[] slots;
        private final boolean[] used;

        LongSet(int expected) {
            int cap = 16;
            while (cap < 2 * expected) cap <<= 1;
            slots = new long[cap];
            used = new boolean[cap];
        }

        /** Whether {@code v} was not in the set (and is now). */
        boolean add(long v) {
            int mask = slots.length - 1;
            for (int h = (int) ((v * 0x9E3779B97F4A7C15L) >>> 40) & mask; ; h = (h + 1) & mask) {
                if (!used[h]) {
                    used[h] = true;
                    slots[h] = v;
                    return true;
                }
                if (slots[h] == v) return false;
            }
        }
    }

    int size() { return kept.length; }

    SkeletonTable skeleton() { return skeleton; }

    /** The most bytes a probe's prologue takes before its first site label (TrampolineWriter.probe's). */
    static final int PROLOGUE = 10;
    /** The most bytes a trampoline's code lies after the site label before it (probe, copies, jump back). */
    static final int REACH = 4096;

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

        /**
         * The module's instruction that trampoline code at run-time address {@code ip} stands for, or -1 when
         * {@code ip} is not near one of this table's probes: the instruction of the probe whose prologue
         * ({@code lea -128(%rsp),%rsp} and three pushes, {@link #PROLOGUE} bytes at most) holds {@code ip},
         * else of the site probed last before {@code ip} within {@link #REACH} bytes, which holds its
         * instruction's moved copy. A fault in a moved instruction without accesses (a tail's {@code ud2}
         * or {@code div}) names the memory instruction before it in its run.
         */
        long instructionAt(long ip) {
            long at = ip - bias;
            int i = Arrays.binarySearch(probes, at);
            if (i < 0) {
                int next = -i - 1;
                i = next < probes.length && probes[next] - at <= PROLOGUE ? next : next - 1;
            }
            if (i < 0 || at - probes[i] >= REACH || probeEntry[i] == ProbeIndex.RELAXED) return -1;
            return entry(probeEntry[i]).insn() + insnBias;
        }

        /** Whether a probe of this table is at run-time address {@code probe}. */
        boolean has(long probe) { return Arrays.binarySearch(probes, probe - bias) >= 0; }

        /** The site of the probe at run-time address {@code probe}, made anew each call; null when no probe is there. */
        Site site(long probe) {
            int at = Arrays.binarySearch(probes, probe - bias);
            if (at < 0) return null;
            int i = probeEntry[at];
            return i == ProbeIndex.RELAXED ? dropped : make(entry(i));
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
