package org.memtrace.instrument;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.memtrace.format.SiteFormat;
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

    /** The {@code memtrace_skel} section; empty when the file has neither loops nor declined loops. */
    String table() {
        if (loops.isEmpty() && declined.isEmpty()) return "";
        var t = new StringBuilder("\t" + SECTION + "\n\t.p2align 3\n");
        t.append("\t.byte ").append(SkeletonFormat.RECORD_VERSION).append(", ").append(SkeletonFormat.VERSION).append(", 0, 0\n\t.long 0\n");
        for (int id = 0; id < loops.size(); id++) {
            LoopSkeleton.Loop loop = loops.get(id);
            int type = SkeletonFormat.loopType(loop.entryItem() > 0 || loop.entryMask() != 0, loop.testedBelowTop(), loop.mayBeEmpty());
            Integer parent = outer.get(loop);
            t.append("\t.byte ").append(type | (parent != null ? SkeletonFormat.RECORD_NESTED : 0)).append(", ").append(loop.registers().size()).append(", ")
                    .append(loop.tripSlot()).append(", ").append(loop.markers().size()).append('\n');
            t.append("\t.long ").append(loop.positions()).append('\n');
            t.append("\t.long ").append(ENTRY_LABEL).append(id).append("-.\n");
            t.append("\t.long ").append(EXIT_LABEL).append(id).append("-.\n");
            for (int s = 0; s < loop.registers().size(); s++) {
                t.append("\t.quad ").append(loop.steps()[s]).append('\n');
                t.append("\t.byte ").append(loop.stepSlots()[s]).append('\n');
                t.append("\t.ascii \"").append(pad(loop.registers().get(s))).append("\"\n");
            }
            var own = loop.items().iterator();
            for (int position = 0; position < loop.positions(); position++) {
                LoopSkeleton.Nest nest = nestAt(loop, position);
                if (nest != null) {
                    int inner = ids.get(nest.inner());
                    long number = SkeletonParts.number(inner, 0); // this file's part: its loops from 0
                    t.append("\t.long ").append(ENTRY_LABEL).append(inner).append("-.\n\t.byte ").append(SkeletonFormat.ITEM_NESTED)
                            .append(", 0, 0, 0\n\t.short 0, 0, 0, 0, 0\n\t.byte ").append(SkeletonFormat.NONE).append(", ")
                            .append(SkeletonFormat.NONE).append(", 0, 0, 0, 0\n\t.quad ").append(number).append('\n');
                    continue;
                }
                LoopSkeleton.Item item = own.next();
                Site s = item.site();
                t.append("\t.long ").append(ProbeWriter.INSTRUCTION_LABEL).append(item.instruction()).append("-.\n");
                t.append("\t.byte ").append(item.computed() ? s.kind() : 0).append(", ").append(s.size()).append(", ")
                        .append(s.access()).append(", ").append(s.flags()).append('\n');
                t.append("\t.short ").append(s.weightMa()).append(", ").append(s.weightAia()).append(", ")
                        .append(s.blockRefs()).append(", ").append(s.blockMa()).append(", ").append(s.blockAia()).append('\n');
                t.append("\t.byte ").append(item.baseSlot()).append(", ").append(item.indexSlot()).append(", ")
                        .append(item.scale()).append(", ").append(item.phase()).append(", ").append(item.cond()).append(", ").append(item.call() ? 1 : 0).append('\n');
                t.append("\t.quad ").append(item.displacement()).append('\n');
            }
            for (int m = 0; m < loop.markers().size(); m++) {
                LoopSkeleton.Marker marker = loop.markers().get(m);
                if (marker.computed()) t.append("\t.long 0\n"); // no probe: no label
                else t.append("\t.long ").append(MARKER_LABEL).append(id).append('_').append(m).append("-.\n");
                t.append("\t.short ").append(marker.item()).append("\n\t.byte ").append(marker.phase() ? 1 : 0).append(", ")
                        .append(SkeletonFormat.markerKind(marker.computed(), marker.exit())).append('\n');
            }
            if (SkeletonFormat.hasTail(type))
                t.append("\t.short ").append(loop.exitItem()).append("\n\t.byte ").append(loop.tripBeforeExit() ? 1 : 0)
                        .append(", 0\n\t.short ").append(loop.entryItem()).append(", ").append(loop.entryMask()).append('\n');
            for (LoopSkeleton.Marker marker : loop.markers()) if (marker.computed()) t.append(SkeletonFormat.directives(marker.condition()));
            if (parent != null) nested(t, loop, loops.get(parent));
        }
        for (LoopSkeleton.Declined d : declined) {
            t.append("\t.byte ").append(SkeletonFormat.RECORD_DECLINED).append(", ").append(d.reason().code).append(", 0, 0\n");
            t.append("\t.long ").append(ProbeWriter.INSTRUCTION_LABEL).append(d.backEdge()).append("-.\n");
        }
        return t.toString();
    }

    private static LoopSkeleton.Nest nestAt(LoopSkeleton.Loop loop, int position) {
        for (LoopSkeleton.Nest n : loop.nests()) if (n.item() == position) return n;
        return null;
    }

    /**
     * A nested loop's record ends with its values as its outer loop computes them, its entry slots in order and then
     * its trip register's final value: each an i64 constant, a u8 count of terms and 7 bytes 0, then per term an
     * i64 factor, the u8 slot of the outer loop's register (its value at the start of the outer iteration) and 7
     * bytes 0.
     */
    private static void nested(StringBuilder t, LoopSkeleton.Loop inner, LoopSkeleton.Loop parent) {
        LoopSkeleton.Nest nest = parent.nests().stream().filter(n -> n.inner() == inner).findFirst().orElseThrow();
        for (LoopSkeleton.Affine a : LoopSkeleton.values(nest)) {
            t.append("\t.quad ").append(a.constant()).append("\n\t.byte ").append(a.terms().size()).append(", 0, 0, 0, 0, 0, 0, 0\n");
            for (var term : LoopSkeleton.byName(a.terms()).entrySet())
                t.append("\t.quad ").append(term.getValue()).append("\n\t.byte ").append(parent.registers().indexOf(term.getKey()))
                        .append(", 0, 0, 0, 0, 0, 0, 0\n");
        }
    }

    /** A register's name in 7 bytes, zero padded: the section stays readable in a hex dump. */
    private static String pad(Register register) {
        return register.name() + "\\0".repeat(SkeletonFormat.NAME_SIZE - register.name().length());
    }
}
