package org.memtrace.instrument;

import static org.memtrace.instrument.AsmFacts.FLAGS;
import static org.memtrace.instrument.AsmFacts.positions;
import static org.memtrace.instrument.AsmFacts.spelled;
import static org.memtrace.instrument.AsmFacts.writes;
import static org.memtrace.instrument.Dominance.always;
import static org.memtrace.instrument.Induction.update;
import static org.memtrace.instrument.LoopAnalysis.analyze;
import static org.memtrace.instrument.LoopShapes.shape;
import static org.memtrace.instrument.LoopSkeleton.NONE;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.memtrace.instrument.Induction.Update;
import org.memtrace.instrument.LoopSkeleton.Affine;
import org.memtrace.instrument.LoopSkeleton.Item;
import org.memtrace.instrument.LoopSkeleton.Loop;
import org.memtrace.instrument.LoopSkeleton.Nest;
import org.memtrace.instrument.LoopSkeleton.Outcome;
import org.memtrace.instrument.LoopSkeleton.Reason;
import org.memtrace.select.FunctionModel;
import org.memtrace.x86.Flow;
import org.memtrace.x86.ImmediateOperand;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.Operand;
import org.memtrace.x86.Register;
import org.memtrace.x86.RegisterOperand;

/**
 * Loop nests (issue 10, docs/compiled-in.md, "Loop nests"): an outer loop whose inner skeleton loops run whole in
 * every iteration, their entry values and trip counts computed from the outer loop's registers.
 */
final class Nests {
    private Nests() {
    }

    /**
     * An outer loop (issue 10): a body of straight code and of inner skeleton loops ({@code accepted}, inner ones
     * first) that run in every iteration, each computed whole (no logged access, no marker, no call) and
     * entered with registers whose values are affine in the outer loop's registers, its trip register ending
     * at a value computable the same way (left by {@code jne}/{@code je} on a compare with a constant or a
     * register it leaves alone). Then the outer loop gets the entry and exit records and the inner loops none:
     * the replay runs them at their place in each iteration (docs/compiled-in.md, "Loop nests"). Otherwise the
     * reason: 10 while the body holds another loop or an inner loop with records of its own, 20 or 21 when the
     * inner loop's entry values or its trip count are not computable.
     */
    static Outcome nest(List<FunctionPlanner.Decoded> code, Candidate c, Map<Instruction, Integer> at, FunctionModel model,
                               Map<Integer, List<Site>> probes, Map<Loop, Candidate> accepted) {
        if (c.entryAt() >= 0 || c.entryTaken()) return Reason.INNER_LOOP;
        List<FunctionPlanner.Decoded> body = c.order();
        Map<Long, Integer> position = positions(body);
        var inside = new ArrayList<Loop>();
        for (var e : accepted.entrySet())
            if (e.getValue().order().stream().allMatch(d -> position.containsKey(d.instruction().address()))) inside.add(e.getKey());
        Map<Integer, Loop> startsAt = new HashMap<>();
        var innerCode = new BitSet();
        for (Loop l : inside) {
            List<FunctionPlanner.Decoded> order = accepted.get(l).order();
            if (inside.stream().anyMatch(o -> o != l && accepted.get(o).order().containsAll(order))) continue; // a grandchild
            int first = position.get(order.getFirst().instruction().address());
            for (int j = 0; j < order.size(); j++)
                if (position.get(order.get(j).instruction().address()) != first + j) return Reason.INNER_LOOP;
            if (!l.markers().isEmpty() || l.entryTaken() || l.entryItem() != 0 || l.entryMask() != 0) return Reason.INNER_LOOP;
            for (Item it : l.items()) if (!it.computed() || it.cond() != 0) return Reason.INNER_LOOP;
            startsAt.put(first, l);
        }
        Set<Long> innerAddresses = new HashSet<>();
        for (Loop l : inside) for (FunctionPlanner.Decoded d : accepted.get(l).order()) innerAddresses.add(d.instruction().address());
        for (int i = 0; i < code.size(); i++) if (innerAddresses.contains(code.get(i).instruction().address())) innerCode.set(i);
        Reason shape = shape(code, c, at, innerCode);
        if (shape != null || startsAt.isEmpty()) return shape != null ? shape : Reason.INNER_LOOP;
        boolean[] always = always(c, model);
        for (int p = 0; p < body.size(); p++)
            if (!always[p] || body.get(p).instruction().flow() == Flow.CALL) return Reason.INNER_LOOP;

        Map<Register, List<Integer>> writers = new HashMap<>();
        for (int p = 0; p < body.size(); p++)
            for (Register r : body.get(p).instruction().registersWritten()) {
                writers.computeIfAbsent(r, k -> new ArrayList<>()).add(p);
                if (!r.enclosing().equals(r)) writers.computeIfAbsent(r.enclosing(), k -> new ArrayList<>()).add(p);
            }
        Map<Register, Update> induction = new LinkedHashMap<>();
        writers.forEach((r, w) -> {
            if (w.size() != 1) return;
            Update u = update(body.get(w.getFirst()), r, w.getFirst(), writers);
            if (u != null && (u.step() != 0 || u.register() != null)) induction.put(r, u);
        });
        induction.putAll(carried(body, startsAt, accepted, writers, induction));
        var nests = new ArrayList<Nest>(); // item: the body position for now
        Reason walked = walk(body, startsAt, accepted, new AffineInterpreter(writers, induction), nests);
        if (walked != null) return walked;
        int nested = 0;
        for (Nest n : nests) nested += n.inner().positions();
        Outcome r = analyze(c, always, probes, nested);
        if (!(r instanceof Loop o)) return r;
        if (!o.markers().isEmpty()) return Reason.INNER_LOOP;
        var slots = new ArrayList<>(o.registers());
        var steps = new ArrayList<Long>();
        for (long v : o.steps()) steps.add(v);
        var stepSlots = new ArrayList<Integer>();
        for (int v : o.stepSlots()) stepSlots.add(v);
        var stepRegister = new HashMap<Integer, Register>();
        for (Nest n : nests)
            for (Affine a : LoopSkeleton.values(n))
                // by name: the terms are a Map.copyOf, whose order each JVM run draws anew (the section changed from build to build)
                for (Register reg : LoopSkeleton.byName(a.terms()).keySet()) {
                    if (slots.contains(reg)) continue;
                    Update u = induction.get(reg);
                    slots.add(reg);
                    steps.add(u == null ? 0 : u.step());
                    stepSlots.add(NONE);
                    if (u != null && u.register() != null) stepRegister.put(slots.size() - 1, u.register());
                }
        for (var e : stepRegister.entrySet()) {
            if (!slots.contains(e.getValue())) {
                slots.add(e.getValue());
                steps.add(0L);
                stepSlots.add(NONE);
            }
            stepSlots.set(e.getKey(), slots.indexOf(e.getValue()));
        }
        if (slots.size() > 32) return Reason.TOO_MANY_BLOCKS;
        // the combined order: an inner loop's run comes before the outer loop's items at later body positions
        Map<Integer, Integer> byIndex = new HashMap<>();
        for (int p = 0; p < body.size(); p++) byIndex.put(body.get(p).index(), p);
        var placed = new ArrayList<Nest>();
        for (int i = 0; i < nests.size(); i++) {
            Nest n = nests.get(i);
            int before = 0;
            for (Item it : o.items()) if (byIndex.get(it.instruction()) < n.item()) before++;
            placed.add(new Nest(before + i, n.inner(), n.entry(), n.exit()));
        }
        int exitItem = o.exitItem();
        if (exitItem > 0 || o.tripBeforeExit()) for (Nest n : nests) if (n.item() < c.exit()) exitItem++;
        return new Loop(o.header(), o.entryJump(), o.backEdge(), o.exitTaken(), o.mayBeEmpty(), List.copyOf(slots),
                steps.stream().mapToLong(Long::longValue).toArray(), stepSlots.stream().mapToInt(Integer::intValue).toArray(),
                o.tripSlot(), o.items(), o.markers(), exitItem, o.tripBeforeExit(), false, 0, 0, List.copyOf(placed));
    }

    /**
     * One outer iteration followed through its straight code and its inner loops ({@code startsAt}, by body
     * position): each inner loop's entry values and final trip value as a {@link Nest} (its item the body position);
     * the reason when one is not computable.
     */
    static Reason walk(List<FunctionPlanner.Decoded> body, Map<Integer, Loop> startsAt, Map<Loop, Candidate> accepted,
                               AffineInterpreter state, List<Nest> nests) {
        Reason reason = null;
        for (int p = 0; p < body.size(); ) {
            Loop l = startsAt.get(p);
            if (l == null) {
                state.run(body.get(p++));
                continue;
            }
            Candidate ic = accepted.get(l);
            var entry = new ArrayList<Affine>();
            for (Register r : l.registers()) entry.add(state.value(r));
            Trip trip = finalTrip(ic, l, state);
            if (entry.contains(null)) reason = reason == null ? Reason.NEST_ENTRY : reason;
            else if (trip == null) reason = reason == null ? Reason.NEST_TRIP : reason;
            else nests.add(new Nest(p, trip.slot() == l.tripSlot() ? l : counted(l, trip.slot()), List.copyOf(entry), trip.value()));
            for (FunctionPlanner.Decoded d : ic.order()) state.kill(d.instruction());
            if (trip != null) state.set(l.registers().get(trip.slot()), trip.value()); // left when it equals the value compared
            p += ic.order().size();
        }
        return reason;
    }

    /**
     * Registers the outer iteration as a whole steps by a constant (or an invariant register) other than by one
     * update: through copies, and through an inner loop that leaves its trip register at a bound (gcc's matrix
     * multiply at -O2 sets the next inner bound from the last: {@code leaq 16(%rax), %rcx} after the inner loop
     * left %rax equal to %rcx). Each is assumed to hold its start value plus iterations times a step, the
     * iteration followed once, and the assumption kept for those that end at their start value plus a constant or
     * an invariant; the others are dropped and the rest followed again, until none is dropped.
     */
    private static Map<Register, Update> carried(List<FunctionPlanner.Decoded> body, Map<Integer, Loop> startsAt,
                                                 Map<Loop, Candidate> accepted, Map<Register, List<Integer>> writers,
                                                 Map<Register, Update> induction) {
        Set<Register> stepped = new HashSet<>();
        for (FunctionPlanner.Decoded d : body)
            for (Register r : d.instruction().registersWritten()) {
                Register e = r.enclosing();
                if (e.widthBits() == 64 && !e.equals(FLAGS) && !e.isInstructionPointer() && !induction.containsKey(e))
                    stepped.add(e);
            }
        Map<Register, Update> carried = new HashMap<>();
        while (!stepped.isEmpty()) {
            Map<Register, Update> known = new HashMap<>(induction);
            for (Register r : stepped) known.put(r, new Update(-1, 0, null));
            AffineInterpreter state = new AffineInterpreter(writers, known);
            walk(body, startsAt, accepted, state, new ArrayList<>());
            carried.clear();
            Set<Register> dropped = new HashSet<>();
            for (Register r : stepped) {
                Affine end = state.value(r);
                Affine step = end == null ? null : end.plus(Affine.register(r).times(-1));
                Register by = step == null || step.terms().size() != 1 ? null : step.terms().keySet().iterator().next();
                if (step != null && step.terms().isEmpty()) carried.put(r, new Update(-1, step.constant(), null));
                else if (by != null && step.constant() == 0 && step.terms().get(by) == 1 && !writers.containsKey(by))
                    carried.put(r, new Update(-1, 0, by));
                else dropped.add(r);
            }
            if (dropped.isEmpty()) break;
            stepped.removeAll(dropped);
            carried.clear();
        }
        return carried;
    }

    /** The loop with its trips counted by slot {@code trip} (a nested loop: no probe logs it, no marker reads it). */
    static Loop counted(Loop l, int trip) {
        return new Loop(l.header(), l.entryJump(), l.backEdge(), l.exitTaken(), l.mayBeEmpty(), l.registers(), l.steps(), l.stepSlots(),
                trip, l.items(), l.markers(), l.exitItem(), l.tripBeforeExit(), l.entryTaken(), l.entryItem(), l.entryMask(), l.nests());
    }

    /**
     * The value the inner loop's trip register has when the loop is left: what its exit compares it with, when the
     * exit is taken on equality ({@code jne} back, {@code je} out) and nothing writes the register between the
     * compare and the jump; a compare with 0 when the flags come from its own update or a {@code test} of it.
     * Null when it is not known from the outer loop's registers.
     */
    private static Trip finalTrip(Candidate ic, Loop l, AffineInterpreter state) {
        String jcc = ic.end().text().mnemonic();
        boolean equal = ic.exitTaken() ? jcc.equals("je") || jcc.equals("jz") : jcc.equals("jne") || jcc.equals("jnz");
        if (!equal) return null;
        // the trip register first; else another slot stepped by a constant, which then counts the trips
        var slots = new ArrayList<Integer>(List.of(l.tripSlot()));
        for (int s = 0; s < l.registers().size(); s++) if (s != l.tripSlot()) slots.add(s);
        for (int s : slots) {
            // another slot only where the record's shape does not depend on which one counts (no test below code)
            if (s != l.tripSlot() && (l.stepSlots()[s] != NONE || l.steps()[s] == 0 || l.testedBelowTop())) continue;
            if (l.stepSlots()[s] != NONE && l.steps()[s] == 0) continue;
            Affine v = finalValue(ic, l.registers().get(s), state);
            if (v != null) return new Trip(s, v);
        }
        return null;
    }

    /** The slot whose final value an inner loop's run is counted by, and that value. */
    private record Trip(int slot, Affine value) {
    }

    private static Affine finalValue(Candidate ic, Register t, AffineInterpreter state) {
        List<FunctionPlanner.Decoded> body = ic.order();
        int test = -1;
        for (int p = ic.exit() - 1; p >= 0 && test < 0; p--) if (writes(body.get(p).instruction(), FLAGS)) test = p;
        if (test < 0 || !spelled(body.get(test))) return null;
        for (int p = test + 1; p < ic.exit(); p++) if (writes(body.get(p).instruction(), t)) return null;
        Instruction x = body.get(test).instruction();
        List<Operand> ops = x.operands();
        switch (x.mnemonic()) {
            case "cmp" -> {
                if (ops.size() < 2) return null; // and the flags, implicit
                for (int o = 0; o < 2; o++) {
                    if (!(ops.get(o) instanceof RegisterOperand reg) || !reg.register().equals(t)) continue;
                    Operand other = ops.get(1 - o);
                    if (other instanceof ImmediateOperand imm) return Affine.of(imm.value());
                    if (other instanceof RegisterOperand y && y.register().widthBits() == 64 && !y.register().isInstructionPointer()
                            && body.stream().noneMatch(d -> writes(d.instruction(), y.register())))
                        return state.value(y.register());
                }
                return null;
            }
            case "test" -> {
                return ops.size() >= 2 && ops.subList(0, 2).stream().allMatch(o -> o instanceof RegisterOperand reg && reg.register().equals(t))
                        ? Affine.of(0) : null;
            }
            case "add", "sub", "inc", "dec" -> {
                return !ops.isEmpty() && ops.getFirst() instanceof RegisterOperand reg && reg.register().equals(t) ? Affine.of(0) : null;
            }
            default -> {
                return null;
            }
        }
    }
}
