package org.memtrace.instrument;

import org.memtrace.select.BlockModel;
import org.memtrace.select.FunctionModel;
import org.memtrace.x86.Flow;
import org.memtrace.x86.ImmediateOperand;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryAccess;
import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.Operand;
import org.memtrace.x86.Register;
import org.memtrace.x86.RegisterOperand;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The static side of skeleton traces (issue 10, Spindle's memory access skeleton): finds the loops of a
 * function whose body is one basic block of {@code select}'s {@link FunctionModel} ending in a conditional
 * jump back to its own first instruction, and in each the accesses whose address is
 * {@code disp + base + index*scale} with registers that the body never writes (invariant) or writes exactly
 * once by adding a constant (induction). Those accesses lose their probe: the loop's entry logs the
 * registers' values, its exit the final value of one induction register, and the reader replays them.
 *
 * <p>Every other access of the body keeps its ordinary probe. A loop that does not fit is left as full mode
 * instruments it, with a reason the trace's summary reports.
 */
final class LoopSkeleton {
    /** Site kinds of the skeleton's own records (docs/compiled-in.md, "Skeleton loops"). */
    static final int KIND_VALUE = 7;
    static final int KIND_EXIT = 8;

    static final int NONE = 0xff;

    /** Reasons a loop is not skeletonized, by their code in the {@code memtrace_skel} section. */
    enum Reason {
        MORE_THAN_ONE_BLOCK(1, "more than one block"),
        CALL_IN_LOOP(2, "call in loop"),
        ENTERED_BY_JUMP(3, "header reached by another jump"),
        INDIRECT_JUMP(4, "indirect jump in the function"),
        REP_STRING(5, "rep string instruction in loop"),
        NO_INDUCTION(6, "no induction register (trip count unknown)"),
        DEPENDS_ON_LOAD(7, "address depends on a load"),
        NOT_AFFINE(8, "no address affine in the loop's registers"),
        LABEL(9, "back edge to a label the rewriter cannot place");

        final int code;
        final String text;

        Reason(int code, String text) {
            this.code = code;
            this.text = text;
        }
    }

    /**
     * One body position in program order: a computed access (its site moved off the probe) or a logged site.
     *
     * @param phase bit 0: the base register's update comes before this access in the body; bit 1: the index's
     */
    record Item(int instruction, Site site, boolean computed, int baseSlot, int indexSlot, int scale, int phase,
                long displacement) {
    }

    /**
     * A skeletonized loop.
     *
     * @param header    the label the back edge jumps to; the entry probe goes right before it
     * @param backEdge  the index of the back-edge jump; the exit probe follows it
     * @param registers the 64-bit registers the entry logs (slots), with their per-iteration steps: the
     *                  constant {@code steps[s]} plus, unless {@code stepSlots[s]} is {@link #NONE}, the value of
     *                  that (invariant) slot
     * @param tripSlot  the induction slot whose final value the exit logs
     */
    record Loop(String header, int backEdge, List<String> registers, long[] steps, int[] stepSlots, int tripSlot,
                List<Item> items) {
    }

    /** An induction register's update: at body position {@code at}, by {@code step} plus an invariant register's value. */
    private record Update(int at, long step, String register) {
    }

    /** A back edge that was not skeletonized; its jump's instruction index and why. */
    record Declined(int backEdge, Reason reason) {
    }

    record Result(List<Loop> loops, List<Declined> declined) {
    }

    private LoopSkeleton() {
    }

    /** Finds the function's skeleton loops and takes their computed sites out of {@code probes}. */
    static Result plan(List<FunctionPlanner.Decoded> code, FunctionModel model, Map<Integer, List<Site>> probes) {
        var loops = new ArrayList<Loop>();
        var declined = new ArrayList<Declined>();
        Map<Long, Integer> jumpsInto = new HashMap<>();
        boolean indirect = false;
        Map<Instruction, FunctionPlanner.Decoded> decoded = new HashMap<>();
        for (FunctionPlanner.Decoded d : code) {
            decoded.put(d.instruction(), d);
            Instruction insn = d.instruction();
            if (insn.flow() == Flow.JUMP && insn.branchTarget().isEmpty()) indirect = true;
            if (insn.flow() != Flow.CALL) insn.branchTarget().ifPresent(t -> jumpsInto.merge(t, 1, Integer::sum));
        }
        for (FunctionPlanner.Decoded d : code) {
            Instruction jump = d.instruction();
            if (jump.flow() != Flow.CONDITIONAL_JUMP || jump.branchTarget().isEmpty()) continue;
            long target = jump.branchTarget().getAsLong();
            if (target > jump.address() || target < code.getFirst().instruction().address()) continue;
            BlockModel block = blockEndingAt(model, jump);
            Reason reason;
            if (block == null || block.block().start() != target) {
                reason = callBetween(code, target, jump.address()) ? Reason.CALL_IN_LOOP : Reason.MORE_THAN_ONE_BLOCK;
            } else if (jumpsInto.getOrDefault(target, 0) > 1) {
                reason = Reason.ENTERED_BY_JUMP;
            } else if (indirect) {
                reason = Reason.INDIRECT_JUMP;
            } else if (label(d) == null) {
                reason = Reason.LABEL;
            } else {
                List<FunctionPlanner.Decoded> body = new ArrayList<>();
                for (Instruction i : block.block().instructions()) body.add(decoded.get(i));
                Object r = analyze(body, label(d), d.index(), probes);
                if (r instanceof Loop loop) {
                    loops.add(loop);
                    for (Item item : loop.items()) if (item.computed()) probes.remove(item.instruction());
                    continue;
                }
                reason = (Reason) r;
            }
            declined.add(new Declined(d.index(), reason));
        }
        return new Result(loops, declined);
    }

    private static BlockModel blockEndingAt(FunctionModel model, Instruction jump) {
        for (BlockModel b : model.blocks()) {
            if (b.block().instructions().getLast() == jump) return b;
        }
        return null;
    }

    private static boolean callBetween(List<FunctionPlanner.Decoded> code, long from, long to) {
        for (FunctionPlanner.Decoded d : code) {
            long a = d.instruction().address();
            if (a >= from && a <= to && d.instruction().flow() == Flow.CALL) return true;
        }
        return false;
    }

    /** The back edge's target label when it is a plain {@code .L} label the probe can be written before. */
    private static String label(FunctionPlanner.Decoded jump) {
        List<String> operands = jump.text().operands();
        if (operands.size() != 1) return null;
        String l = operands.getFirst().strip();
        return l.startsWith(".L") && l.matches("[.A-Za-z0-9_$]+") ? l : null;
    }

    /** The loop, or the reason it is not one the skeleton handles. */
    private static Object analyze(List<FunctionPlanner.Decoded> body, String header, int backEdge,
                                  Map<Integer, List<Site>> probes) {
        Map<String, List<Integer>> writers = new HashMap<>();
        for (int p = 0; p < body.size(); p++) {
            Instruction insn = body.get(p).instruction();
            if (insn.rep()) return Reason.REP_STRING;
            for (Register r : insn.registersWritten()) writers.computeIfAbsent(r.name(), k -> new ArrayList<>()).add(p);
        }
        Map<String, Update> induction = new LinkedHashMap<>();
        writers.forEach((r, at) -> {
            if (at.size() == 1) {
                Update u = update(body.get(at.getFirst()), r, at.getFirst(), writers);
                if (u != null && (u.step() != 0 || u.register() != null)) induction.put(r, u);
            }
        });
        if (induction.isEmpty()) return Reason.NO_INDUCTION;

        var slots = new ArrayList<String>();
        var items = new ArrayList<Item>();
        boolean computed = false;
        boolean onLoad = false;
        for (int p = 0; p < body.size(); p++) {
            FunctionPlanner.Decoded d = body.get(p);
            List<Site> sites = probes.get(d.index());
            if (sites == null) continue;
            MemoryOperand m = affine(d, sites, writers, induction);
            if (m == null) {
                onLoad |= dependsOnLoad(d, writers, body);
                for (Site s : sites) items.add(new Item(d.index(), s, false, NONE, NONE, 0, 0, 0));
                continue;
            }
            computed = true;
            int base = slot(slots, m.base());
            int index = slot(slots, m.index());
            int phase = 0;
            if (base != NONE && induction.containsKey(m.base().name()) && induction.get(m.base().name()).at() < p) phase |= 1;
            if (index != NONE && induction.containsKey(m.index().name()) && induction.get(m.index().name()).at() < p) phase |= 2;
            items.add(new Item(d.index(), sites.getFirst(), true, base, index, Math.max(1, m.scale()), phase,
                    m.displacement()));
        }
        if (!computed) return onLoad ? Reason.DEPENDS_ON_LOAD : Reason.NOT_AFFINE;
        // the trip count comes best from a constant step: a register step of 0 at run time leaves it unknown
        int trip = -1;
        for (int s = 0; s < slots.size() && trip < 0; s++) {
            Update u = induction.get(slots.get(s));
            if (u != null && u.register() == null) trip = s;
        }
        for (int s = 0; s < slots.size() && trip < 0; s++) if (induction.containsKey(slots.get(s))) trip = s;
        if (trip < 0) {
            String r = induction.keySet().iterator().next();
            for (var e : induction.entrySet()) if (e.getValue().register() == null) { r = e.getKey(); break; }
            trip = slot(slots, r);
        }
        // the registers that steps add come last: logged at entry like the others
        for (int s = 0; s < slots.size(); s++) {
            Update u = induction.get(slots.get(s));
            if (u != null && u.register() != null && !slots.contains(u.register())) slots.add(u.register());
        }
        long[] steps = new long[slots.size()];
        int[] stepSlots = new int[slots.size()];
        for (int s = 0; s < steps.length; s++) {
            Update u = induction.get(slots.get(s));
            steps[s] = u == null ? 0 : u.step();
            stepSlots[s] = u == null || u.register() == null ? NONE : slots.indexOf(u.register());
        }
        return new Loop(header, backEdge, List.copyOf(slots), steps, stepSlots, trip, List.copyOf(items));
    }

    private static int slot(List<String> slots, Register r) {
        return r.isNone() ? NONE : slot(slots, r.name());
    }

    private static int slot(List<String> slots, String r) {
        int i = slots.indexOf(r);
        if (i >= 0) return i;
        slots.add(r);
        return slots.size() - 1;
    }

    /**
     * The instruction's one explicit access when the replay can compute it: one site, a plain load, store or
     * modify, no segment base, no RIP, a numeric displacement as the text wrote it, and 64-bit registers
     * that the body leaves alone or steps.
     */
    private static MemoryOperand affine(FunctionPlanner.Decoded d, List<Site> sites, Map<String, List<Integer>> writers,
                                        Map<String, Update> induction) {
        List<MemoryAccess> accesses = d.instruction().accesses();
        if (sites.size() != 1 || accesses.size() != 1) return null;
        Site site = sites.getFirst();
        if (site.kind() < Site.LOAD || site.kind() > Site.MODIFY || site.fs()) return null;
        MemoryOperand m = accesses.getFirst().operand();
        if (m.visibility() != Operand.Visibility.EXPLICIT || m.segment().isSegmentWithBase()) return null;
        for (Register r : List.of(m.base(), m.index())) {
            if (r.isNone()) continue;
            if (r.isInstructionPointer() || r.widthBits() != 64) return null;
            if (writers.containsKey(r.name()) && !induction.containsKey(r.name())) return null;
        }
        List<String> texts = d.text().memoryOperands();
        if (texts.size() != 1) return null;
        String text = texts.getFirst();
        int colon = text.indexOf(':');
        if (colon >= 0 && (text.indexOf('(') < 0 || colon < text.indexOf('('))) return null;
        int open = text.indexOf('(');
        String disp = (open < 0 ? text : text.substring(0, open)).strip();
        if (open < 0) return null;
        if (!disp.isEmpty()) {
            Long v = number(disp);
            if (v == null || v != m.displacement()) return null;
        } else if (m.displacement() != 0) {
            return null;
        }
        return m;
    }

    private static Long number(String s) {
        try {
            String t = s.toLowerCase(Locale.ROOT);
            boolean negative = t.startsWith("-");
            if (negative) t = t.substring(1);
            long v = t.startsWith("0x") ? Long.parseUnsignedLong(t.substring(2), 16) : Long.parseLong(t);
            return negative ? -v : v;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** Whether a register the access's address uses is written in the body by an instruction that reads memory. */
    private static boolean dependsOnLoad(FunctionPlanner.Decoded d, Map<String, List<Integer>> writers,
                                         List<FunctionPlanner.Decoded> body) {
        for (MemoryAccess a : d.instruction().accesses()) {
            for (Register r : List.of(a.operand().base(), a.operand().index())) {
                if (r.isNone()) continue;
                for (int w : writers.getOrDefault(r.enclosing().name(), List.of())) {
                    if (!body.get(w).instruction().accesses().isEmpty()) return true;
                }
            }
        }
        return false;
    }

    /**
     * The update of the 64-bit register {@code r} by {@code d}: a constant added (add, sub, inc, dec, lea) or
     * a register the body never writes ({@code add %reg, %r}); null when it is no such update.
     */
    private static Update update(FunctionPlanner.Decoded d, String r, int at, Map<String, List<Integer>> writers) {
        List<Operand> ops = d.instruction().operands();
        if (d.instruction().mnemonic().equals("add") && ops.size() >= 2 && ops.get(0) instanceof RegisterOperand dst
                && ops.get(1) instanceof RegisterOperand src && dst.register().name().equals(r)
                && dst.register().widthBits() == 64 && src.register().widthBits() == 64
                && src.visibility() == Operand.Visibility.EXPLICIT && !src.register().name().equals(r)
                && !writers.containsKey(src.register().name())) {
            return new Update(at, 0, src.register().name());
        }
        Long step = step(d, r);
        return step == null ? null : new Update(at, step, null);
    }

    /** The constant {@code insn} adds to the 64-bit register {@code r}; null when it is no such update. */
    private static Long step(FunctionPlanner.Decoded d, String r) {
        Instruction insn = d.instruction();
        // a relocated immediate or displacement decodes as 0 in the object: only what the text spells is a constant
        for (String o : d.text().operands()) {
            String t = o.strip();
            if (t.startsWith("$") ? number(t.substring(1)) == null
                    : !t.startsWith("%") && (t.indexOf('(') < 0 ? number(t) == null
                    : t.indexOf('(') > 0 && number(t.substring(0, t.indexOf('(')).strip()) == null)) return null;
        }
        List<Operand> ops = insn.operands();
        if (ops.isEmpty() || !(ops.getFirst() instanceof RegisterOperand dst)) return null;
        if (!dst.register().name().equals(r) || dst.register().widthBits() != 64) return null;
        String mn = insn.mnemonic();
        switch (mn) {
            case "add", "sub" -> {
                if (ops.size() < 2 || !(ops.get(1) instanceof ImmediateOperand imm)
                        || imm.visibility() != Operand.Visibility.EXPLICIT) return null;
                return mn.equals("add") ? imm.value() : -imm.value();
            }
            case "inc" -> {
                return 1L;
            }
            case "dec" -> {
                return -1L;
            }
            case "lea" -> {
                if (ops.size() < 2 || !(ops.get(1) instanceof MemoryOperand m)) return null;
                if (!m.base().name().equals(r) || !m.index().isNone() || m.segment().isSegmentWithBase()) return null;
                return m.displacement();
            }
            default -> {
                return null;
            }
        }
    }
}
