package org.memtrace.instrument;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.memtrace.format.SiteFormat;
import org.memtrace.format.SkeletonEntries;
import org.memtrace.format.SkeletonFormat;
import org.memtrace.format.SkeletonParts;
import org.memtrace.x86.Register;

/**
 * Writes a file's skeleton loops: their entry and exit probes (through {@link ProbeWriter}) and the
 * {@code memtrace_skel} section that tells the reader how to replay them (docs/compiled-in.md, "Skeleton
 * loops"). Loops are numbered in the file; their labels are {@code .Lmt_e<N>} (entry) and {@code .Lmt_x<N>}
 * (exit), a conditional block's marker {@code .Lmt_m<N>_<M>}.
 */
final class SkeletonWriter {
    static final String ENTRY_LABEL = ".Lmt_e";
    static final String EXIT_LABEL = ".Lmt_x";
    static final String MARKER_LABEL = ".Lmt_m";
    static final String SECTION = ".section " + SkeletonFormat.SECTION + ",\"aR\",@progbits";
    /** Where a conditional entry jump, inverted, goes when it does not enter the loop: past the entry probe. */
    static final String SKIP_LABEL = ".Lmt_n";
    /** Where a rotated loop's inverted exit jump goes when the loop goes on: right after the exit probe. */
    static final String CONTINUE_LABEL = ".Lmt_c";

    private final Map<String, Integer> byHeader = new HashMap<>();
    private final Map<Integer, Integer> byBackEdge = new HashMap<>();
    private final Map<Integer, Integer> byEntryJump = new HashMap<>();
    /** Marker probes by the instruction they go before: {loop, marker}. */
    private final Map<Integer, int[]> markerBefore = new HashMap<>();
    /** Side exits' marker probes by their jump, which is inverted to skip them: {loop, marker}. */
    private final Map<Integer, int[]> sideExits = new HashMap<>();
    private final Set<Integer> labeled = new HashSet<>();
    private final List<LoopSkeleton.Loop> loops = new ArrayList<>();
    private final List<LoopSkeleton.Declined> declined = new ArrayList<>();
    /** The loops an outer loop runs, by loop: that loop's number. */
    private final Map<LoopSkeleton.Loop, Integer> outer = new java.util.IdentityHashMap<>();
    private final Map<LoopSkeleton.Loop, Integer> ids = new java.util.IdentityHashMap<>();

    void add(LoopSkeleton.Result r) {
        for (LoopSkeleton.Loop loop : r.loops()) {
            int id = loops.size();
            loops.add(loop);
            ids.put(loop, id);
            for (LoopSkeleton.Nest n : loop.nests()) outer.put(n.inner(), id);
            if (loop.header() != null) byHeader.put(loop.header(), id);
            if (loop.entryJump() >= 0) byEntryJump.put(loop.entryJump(), id);
            byBackEdge.put(loop.backEdge(), id);
            for (LoopSkeleton.Item item : loop.items()) labeled.add(item.instruction());
            for (int m = 0; m < loop.markers().size(); m++) {
                LoopSkeleton.Marker marker = loop.markers().get(m);
                if (!marker.computed()) (marker.exit() ? sideExits : markerBefore).put(marker.instruction(), new int[] {id, m});
            }
        }
        for (LoopSkeleton.Declined d : r.declined()) {
            declined.add(d);
            labeled.add(d.backEdge());
        }
    }

    int loops() {
        return loops.size();
    }

    /** Instructions the table names without a probe of their own: they need their {@code .Lmt_i} label anyway. */
    boolean needsLabel(int instruction) {
        return labeled.contains(instruction);
    }

    /** Before the label {@code statement}: the entry probe when it is a skeleton loop's header. */
    void beforeLabel(StringBuilder out, String statement, ProbeWriter probes, boolean cfi) {
        if (!statement.endsWith(":")) return;
        Integer id = byHeader.get(statement.substring(0, statement.length() - 1));
        if (id != null) entry(out, id, probes, cfi);
    }

    private void entry(StringBuilder out, int id, ProbeWriter probes, boolean cfi) {
        LoopSkeleton.Loop loop = loops.get(id);
        if (outer.containsKey(loop)) { // its outer loop computes what the probe would log
            out.append(ENTRY_LABEL).append(id).append(":\n");
            return;
        }
        var sites = new ArrayList<Site>();
        for (int s = 0; s < loop.registers().size(); s++) sites.add(value(loop.registers().get(s), SiteFormat.VALUE, s));
        probes.values(out, ENTRY_LABEL + id, sites, cfi);
    }

    /**
     * Before the instruction (and its own probe): the entry probe of a loop this jump enters, or a conditional
     * block's marker, which logs the trip register.
     */
    void beforeInstruction(StringBuilder out, int instruction, ProbeWriter probes, boolean cfi) {
        Integer id = byEntryJump.get(instruction);
        if (id != null && !loops.get(id).entryTaken()) entry(out, id, probes, cfi);
        int[] at = markerBefore.get(instruction);
        if (at == null) return;
        LoopSkeleton.Loop loop = loops.get(at[0]);
        Site marker = value(loop.registers().get(loop.tripSlot()), SiteFormat.MARKER, at[1]);
        probes.values(out, MARKER_LABEL + at[0] + "_" + at[1], List.of(marker), cfi);
    }

    /**
     * The instruction as written: a rotated loop's exit jump is inverted to jump, while the loop goes on,
     * past the exit probe that {@link #afterInstruction} puts on its fall-through path.
     */
    String text(int instruction, AsmSyntax.Instruction text) {
        Integer entered = byEntryJump.get(instruction);
        if (entered != null && loops.get(entered).entryTaken()) return LoopSkeleton.inverse(text.mnemonic()) + "\t" + SKIP_LABEL + entered;
        int[] side = sideExits.get(instruction);
        if (side != null && loops.get(side[0]).markers().get(side[1]).taken()) return LoopSkeleton.inverse(text.mnemonic()) + "\t" + CONTINUE_LABEL + side[0] + "_" + side[1];
        Integer id = byBackEdge.get(instruction);
        if (id == null || !loops.get(id).exitTaken() || outer.containsKey(loops.get(id))) return text.text();
        return LoopSkeleton.inverse(text.mnemonic()) + "\t" + CONTINUE_LABEL + id;
    }

    /**
     * After the instruction: the exit probe when it is a skeleton loop's last jump, on the path that leaves
     * the loop (the fall-through; for a rotated loop the probe, a jump to the exit and the label its inverted
     * jump goes to when the loop goes on).
     */
    void afterInstruction(StringBuilder out, int instruction, AsmSyntax.Instruction text, ProbeWriter probes, boolean cfi) {
        Integer entered = byEntryJump.get(instruction);
        if (entered != null && loops.get(entered).entryTaken()) {
            entry(out, entered, probes, cfi);
            out.append("\tjmp\t").append(text.operands().getFirst().strip()).append('\n').append(SKIP_LABEL).append(entered).append(":\n");
            return;
        }
        int[] side = sideExits.get(instruction);
        if (side != null) {
            LoopSkeleton.Loop loop = loops.get(side[0]);
            Site marker = value(loop.registers().get(loop.tripSlot()), SiteFormat.MARKER, side[1]);
            probes.values(out, MARKER_LABEL + side[0] + "_" + side[1], List.of(marker), cfi);
            if (!loop.markers().get(side[1]).taken()) return; // the jump stays: the probe is on its fall-through out
            out.append("\tjmp\t").append(text.operands().getFirst().strip()).append('\n')
                    .append(CONTINUE_LABEL).append(side[0]).append('_').append(side[1]).append(":\n");
            return;
        }
        Integer id = byBackEdge.get(instruction);
        if (id == null) return;
        LoopSkeleton.Loop loop = loops.get(id);
        if (outer.containsKey(loop)) {
            out.append(EXIT_LABEL).append(id).append(":\n");
            return;
        }
        Site exit = value(loop.registers().get(loop.tripSlot()), SiteFormat.EXIT, loop.tripSlot());
        probes.values(out, EXIT_LABEL + id, List.of(exit), cfi);
        if (loop.exitTaken()) out.append("\tjmp\t").append(text.operands().getFirst().strip()).append('\n')
                .append(CONTINUE_LABEL).append(id).append(":\n");
    }

    /** A site whose record is a register's value: lea of {@code (%reg)} is the register itself. */
    private static Site value(Register register, int kind, int slot) {
        String operand = register.isStackPointer() ? FunctionPlanner.RSP_OFFSET + "(%rsp)" : "(%" + register.name() + ")";
        return new Site(operand, false, kind, 8, slot, 0, 0, 0, 0, 0, 0);
    }

    /**
     * The {@code memtrace_skel} section; empty when the file has neither loops nor declined loops. Each entry is
     * written by {@link SkeletonEntries}, beside the decoder the reader calls.
     */
    String table() {
        if (loops.isEmpty() && declined.isEmpty()) return "";
        var t = new StringBuilder("\t" + SECTION + "\n\t.p2align 3\n").append(SkeletonEntries.version());
        for (int id = 0; id < loops.size(); id++) {
            LoopSkeleton.Loop loop = loops.get(id);
            int type = SkeletonFormat.loopType(loop.entryItem() > 0 || loop.entryMask() != 0, loop.testedBelowTop(), loop.mayBeEmpty());
            Integer parent = outer.get(loop);
            t.append(SkeletonEntries.directives(new SkeletonEntries.Head(type, parent != null, loop.registers().size(), loop.tripSlot(),
                    loop.markers().size(), loop.positions(), 0, 0), ENTRY_LABEL + id, EXIT_LABEL + id));
            for (int s = 0; s < loop.registers().size(); s++)
                t.append(SkeletonEntries.directives(new SkeletonEntries.Slot(loop.steps()[s], loop.stepSlots()[s], loop.registers().get(s).name())));
            var own = loop.items().iterator();
            for (int position = 0; position < loop.positions(); position++) {
                LoopSkeleton.Nest nest = nestAt(loop, position);
                if (nest != null) {
                    int inner = ids.get(nest.inner());
                    long number = SkeletonParts.number(inner, 0); // this file's part: its loops from 0
                    t.append(SkeletonEntries.directives(new SkeletonEntries.Item(0, SkeletonFormat.ITEM_NESTED, 0, 0, 0, 0, 0, 0, 0, 0,
                            SkeletonFormat.NONE, SkeletonFormat.NONE, 0, 0, 0, false, number), ENTRY_LABEL + inner));
                    continue;
                }
                LoopSkeleton.Item item = own.next();
                Site s = item.site();
                t.append(SkeletonEntries.directives(new SkeletonEntries.Item(0, item.computed() ? s.kind() : SkeletonFormat.ITEM_LOGGED,
                        s.size(), s.access(), s.flags(), s.weightMa(), s.weightAia(), s.blockRefs(), s.blockMa(), s.blockAia(),
                        item.baseSlot(), item.indexSlot(), item.scale(), item.phase(), item.cond(), item.call(), item.displacement()),
                        ProbeWriter.INSTRUCTION_LABEL + item.instruction()));
            }
            for (int m = 0; m < loop.markers().size(); m++) {
                LoopSkeleton.Marker marker = loop.markers().get(m);
                t.append(SkeletonEntries.directives(new SkeletonEntries.Marker(0, marker.item(), marker.phase(),
                        SkeletonFormat.markerKind(marker.computed(), marker.exit())), marker.computed() ? null : MARKER_LABEL + id + "_" + m));
            }
            if (SkeletonFormat.hasTail(type))
                t.append(SkeletonEntries.directives(new SkeletonEntries.Tail(loop.exitItem(), loop.tripBeforeExit(), loop.entryItem(), loop.entryMask())));
            for (LoopSkeleton.Marker marker : loop.markers()) if (marker.computed()) t.append(SkeletonFormat.directives(marker.condition()));
            if (parent != null) nested(t, loop, loops.get(parent));
        }
        for (LoopSkeleton.Declined d : declined)
            t.append(SkeletonEntries.declined(d.reason().code, ProbeWriter.INSTRUCTION_LABEL + d.backEdge()));
        return t.toString();
    }

    private static LoopSkeleton.Nest nestAt(LoopSkeleton.Loop loop, int position) {
        for (LoopSkeleton.Nest n : loop.nests()) if (n.item() == position) return n;
        return null;
    }

    /**
     * A nested loop's record ends with its values as its outer loop computes them ({@link SkeletonEntries.Value}): its
     * entry slots in order and then its trip register's final value, each term naming the outer loop's slot.
     */
    private static void nested(StringBuilder t, LoopSkeleton.Loop inner, LoopSkeleton.Loop parent) {
        LoopSkeleton.Nest nest = parent.nests().stream().filter(n -> n.inner() == inner).findFirst().orElseThrow();
        for (LoopSkeleton.Affine a : LoopSkeleton.values(nest)) {
            var terms = LoopSkeleton.byName(a.terms());
            int[] slots = new int[terms.size()];
            long[] factors = new long[terms.size()];
            int j = 0;
            for (var term : terms.entrySet()) {
                slots[j] = parent.registers().indexOf(term.getKey());
                factors[j++] = term.getValue();
            }
            t.append(SkeletonEntries.directives(new SkeletonEntries.Value(a.constant(), slots, factors)));
        }
    }
}
