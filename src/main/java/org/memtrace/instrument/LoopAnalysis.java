package org.memtrace.instrument;

import static org.memtrace.instrument.AsmFacts.FLAGS;
import static org.memtrace.instrument.AsmFacts.blockStart;
import static org.memtrace.instrument.AsmFacts.inverse;
import static org.memtrace.instrument.AsmFacts.label;
import static org.memtrace.instrument.AsmFacts.positions;
import static org.memtrace.instrument.Conditions.condition;
import static org.memtrace.instrument.Induction.affine;
import static org.memtrace.instrument.Induction.dependsOnLoad;
import static org.memtrace.instrument.Induction.searches;
import static org.memtrace.instrument.Induction.slot;
import static org.memtrace.instrument.Induction.update;
import static org.memtrace.instrument.LoopSkeleton.NONE;
import static org.memtrace.instrument.LoopSkeleton.OPTIONAL;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.memtrace.format.SiteFormat;
import org.memtrace.format.SkeletonFormat.Condition;
import org.memtrace.instrument.Induction.Update;
import org.memtrace.instrument.LoopSkeleton.Item;
import org.memtrace.instrument.LoopSkeleton.Loop;
import org.memtrace.instrument.LoopSkeleton.Marker;
import org.memtrace.instrument.LoopSkeleton.Outcome;
import org.memtrace.instrument.LoopSkeleton.Reason;
import org.memtrace.x86.Flow;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.Operand;
import org.memtrace.x86.RegisterOperand;
import org.memtrace.x86.Register;

/**
 * One loop of a known shape analyzed into a skeleton loop: its induction registers, the accesses the replay
 * computes and those it logs in program order, the markers of its conditional blocks and side exits (with
 * {@link Conditions} where the replay can compute them), its slots and steps; or the reason it is not worth it.
 */
final class LoopAnalysis {
    private LoopAnalysis() {
    }

    /** Markers a loop may have: {@code cond} m+1 must stay below {@link #OPTIONAL}. */
    private static final int MAX_MARKERS = 200;
    /**
     * The registers a call writes as far as the loop can tell: its result. Compiled code reads any other register
     * after a call only when the callee keeps it (the ABI's callee-saved ones, and whichever others gcc's
     * {@code -fipa-ra} knows a callee in the same file leaves alone: gcc -O2 keeps a loop's index in %r8
     * across such a call), so a register the body reads again next iteration survives the call.
     */
    private static final List<Register> CALL_RESULT = List.of(Register.named("rax"), Register.named("rdx"));

    /** The loop, or the reason it is not one the skeleton handles; {@code always[p]}: body position p runs every iteration. */
    static Outcome analyze(Candidate loop, boolean[] always, Map<Integer, List<Site>> probes) {
        return analyze(loop, always, probes, 0);
    }

    /** As above for an outer loop whose inner loops compute {@code nested} accesses in every iteration too. */
    static Outcome analyze(Candidate loop, boolean[] always, Map<Integer, List<Site>> probes, int nested) {
        List<FunctionPlanner.Decoded> body = loop.order();
        Map<Register, List<Integer>> writers = new LinkedHashMap<>(); // in the order the body first writes them
        for (int p = 0; p < body.size(); p++) {
            Instruction insn = body.get(p).instruction();
            for (Register r : insn.registersWritten()) writers.computeIfAbsent(r, k -> new ArrayList<>()).add(p);
            // the replay expects a logged site's records in every run, but the link may relax this one to nothing
            List<Site> linked = probes.get(body.get(p).index());
            if (linked != null && linked.stream().anyMatch(s -> (s.flags() & SiteFormat.FLAG_KEPT_WHERE_LINKED) != 0))
                return Reason.LINK_MAY_RELAX;
            if (insn.flow() != Flow.CALL) continue;
            // the callee's records say nothing of where it starts: the call's own record (its return address) must
            if (probes.get(body.get(p).index()) == null) return Reason.CALL_IN_LOOP;
            for (Register r : CALL_RESULT) writers.computeIfAbsent(r, k -> new ArrayList<>()).add(p);
        }
        Map<Register, Update> induction = new LinkedHashMap<>();
        for (Register r : Induction.triedInOrder(writers.keySet())) {
            List<Integer> at = writers.get(r);
            if (at.size() == 1 && always[at.getFirst()]) {
                Update u = update(body.get(at.getFirst()), r, at.getFirst(), writers);
                if (u != null && (u.step() != 0 || u.register() != null)) induction.put(r, u);
            }
        }
        if (induction.isEmpty()) return Reason.NO_INDUCTION;

        // the records of a logged access that runs every iteration keep the iterations apart; without one,
        // each conditional block with accesses needs a marker to say in which iteration it ran
        boolean anchored = false;
        for (int p = 0; p < body.size(); p++) {
            List<Site> sites = probes.get(body.get(p).index());
            if (sites != null && always[p] && affine(body.get(p), sites, writers, induction) == null) anchored = true;
        }
        var slots = new ArrayList<Register>();
        var items = new ArrayList<Item>();
        var markers = new ArrayList<Marker>();
        var markerAt = new ArrayList<Integer>(); // body position of each marker's block start or side exit
        var inside = new HashSet<Long>();
        for (FunctionPlanner.Decoded d : body) inside.add(d.instruction().address());
        boolean computed = nested > 0;
        boolean onLoad = false;
        int block = 0, marked = -1, exitItem = 0, entryItem = 0;
        int entryPos = loop.entryAt() < 0 ? 0 : positions(body).get(loop.entryAt());
        boolean top = loop.exit() < body.size() - 1; // tested at the top: its test is not the body's last jump
        for (int p = 0; p < body.size(); p++) {
            FunctionPlanner.Decoded d = body.get(p);
            if (top && p == loop.exit()) exitItem = items.size();
            if (p == entryPos) entryItem = items.size();
            if (blockStart(body, p)) block = p;
            Instruction insn = d.instruction();
            boolean out = p != loop.exit() && p != body.size() - 1 && insn.flow() == Flow.CONDITIONAL_JUMP;
            boolean taken = out && !inside.contains(insn.branchTarget().getAsLong());
            if (taken || out && !inside.contains(insn.nextAddress())) {
                if (taken && (label(d) == null || inverse(d.text().mnemonic()) == null)) return Reason.EXIT_IN_BODY;
                if (markers.size() == MAX_MARKERS || items.size() > 0xffff) return Reason.TOO_MANY_BLOCKS;
                markers.add(new Marker(d.index(), items.size(), false, true, taken));
                markerAt.add(p);
                continue;
            }
            List<Site> sites = probes.get(d.index());
            if (sites == null) continue;
            if (!always[p] && !anchored && marked != block) {
                if (markers.size() == MAX_MARKERS || items.size() > 0xffff) return Reason.TOO_MANY_BLOCKS;
                markers.add(new Marker(body.get(block).index(), items.size(), false, false, false));
                markerAt.add(block);
                marked = block;
            }
            int c = always[p] ? 0 : anchored ? OPTIONAL : markers.size();
            MemoryOperand m = c == OPTIONAL ? null : affine(d, sites, writers, induction);
            if (m == null) {
                onLoad |= dependsOnLoad(d, writers, body);
                boolean call = insn.flow() == Flow.CALL;
                for (Site s : sites) items.add(new Item(d.index(), s, false, NONE, NONE, 0, 0, c, 0, call));
                continue;
            }
            computed = true;
            int base = slot(slots, m.base());
            int index = slot(slots, m.index());
            int phase = 0;
            if (base != NONE && induction.containsKey(m.base()) && induction.get(m.base()).at() < p) phase |= 1;
            if (index != NONE && induction.containsKey(m.index()) && induction.get(m.index()).at() < p) phase |= 2;
            items.add(new Item(d.index(), sites.getFirst(), true, base, index, Math.max(1, m.scale()), phase, c,
                    m.displacement(), false));
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
            Register r = induction.keySet().iterator().next();
            for (var e : induction.entrySet()) if (e.getValue().register() == null) { r = e.getKey(); break; }
            trip = slot(slots, r);
        }
        int tripAt = induction.get(slots.get(trip)).at();
        for (int i = 0; i < markers.size(); i++) {
            Marker k = markers.get(i);
            // a block with a logged access keeps its marker: without it a wrong record would send the replay
            // searching through iterations for one where the block runs, with nothing to stop it
            int m = i + 1;
            boolean allComputed = items.stream().allMatch(it -> it.cond() != m || it.computed());
            Condition computedIf = k.exit() || !allComputed ? null : condition(body, always, markerAt.get(i), writers, induction, slots);
            markers.set(i, new Marker(k.instruction(), k.item(), tripAt < markerAt.get(i), k.exit(), k.taken(), computedIf));
        }
        // the registers that steps add come last: logged at entry like the others
        for (int s = 0; s < slots.size(); s++) {
            Update u = induction.get(slots.get(s));
            if (u != null && u.register() != null && !slots.contains(u.register())) slots.add(u.register());
        }
        int every = computedEveryIteration(items) + nested;
        if (searches(body, loop.exit(), writers, induction) && every <= slots.size()) return Reason.SHORT_SEARCH;
        if (chasedBreak(body, markers, markerAt, writers) && every <= slots.size() + 1) return Reason.SHORT_SEARCH;
        if (loggedEveryIteration(items) >= every) return Reason.MOSTLY_LOGGED;
        long[] steps = new long[slots.size()];
        int[] stepSlots = new int[slots.size()];
        for (int s = 0; s < steps.length; s++) {
            Update u = induction.get(slots.get(s));
            steps[s] = u == null ? 0 : u.step();
            stepSlots[s] = u == null || u.register() == null ? NONE : slots.indexOf(u.register());
        }
        String header = loop.entryJump() < 0 ? label(loop.order().getLast()) : null;
        boolean tripBeforeExit = top && tripAt < loop.exit();
        // entered in the middle: the first iteration skips the updates before its start (the replay counts it as
        // iteration 0 of registers one step back); a run whose entry position holds no item starts at the next
        int entryMask = 0;
        for (int s = 0; s < slots.size(); s++) {
            Update u = induction.get(slots.get(s));
            if (u != null && u.at() < entryPos) entryMask |= 1 << s;
        }
        if (entryPos > 0 && slots.size() > 16) return Reason.TOO_MANY_BLOCKS;
        return new Loop(header, loop.entryInstruction(), loop.end().index(), loop.exitTaken(), loop.mayBeEmpty(), List.copyOf(slots), steps,
                stepSlots, trip, List.copyOf(items), List.copyOf(markers), exitItem, tripBeforeExit, loop.entryTaken(),
                entryItem, entryMask, List.of());
    }

    /**
     * Whether a side exit's condition reads data reached through a pointer the body loads (picosat's watch
     * loop, {@code while (++l != eol) { lit = *l; ...; if (lit->val != FALSE) break; }}): a walk over data
     * scattered on the heap whose length the data decide, one or two iterations a run on a SAT solver's
     * clauses. Such a run logs its slots and a side-exit marker, pointers into blocks visited in no order,
     * which pack worse than full mode's strided records of the accesses it computes (picosat: 551,689 runs
     * computing 2.5 accesses each made the skeleton trace 2.6 % larger than full mode's), so it pays only when
     * an iteration computes more than the records a run adds. A break on an array the loop strides through
     * ({@code if (p[i] > 250) break}: the compared load is itself computed) is not such a walk: its runs are
     * as long as the array's stretch before the value, and it stays a skeleton loop.
     */
    static boolean chasedBreak(List<FunctionPlanner.Decoded> body, List<Marker> markers, List<Integer> markerAt,
                               Map<Register, List<Integer>> writers) {
        for (int i = 0; i < markers.size(); i++) {
            if (!markers.get(i).exit()) continue;
            for (int p = markerAt.get(i) - 1; p >= 0; p--) {
                Instruction insn = body.get(p).instruction();
                if (insn.registersWritten().stream().noneMatch(r -> r.equals(FLAGS))) continue;
                if (!insn.accesses().isEmpty()) {
                    if (dependsOnLoad(body.get(p), writers, body)) return true;
                    break;
                }
                for (Operand o : insn.operands()) {
                    if (!(o instanceof RegisterOperand r) || !r.read() || r.register().isNone()) continue;
                    for (int w : reaching(writers.getOrDefault(r.register().enclosing(), List.of()), p))
                        if (!body.get(w).instruction().accesses().isEmpty() && dependsOnLoad(body.get(w), writers, body))
                            return true;
                }
                break;
            }
        }
        return false;
    }

    /**
     * The writers of a register whose value can reach position {@code p} of the body: the last one before it
     * when there is one (bench's chase loop loads {@code rdx} by a strided access, tests it, then loads through
     * it: the test sees the strided load only), else the ones after it, through the back edge.
     */
    static List<Integer> reaching(List<Integer> writers, int p) {
        int before = -1;
        for (int w : writers) if (w < p && w > before) before = w;
        return before >= 0 ? List.of(before) : writers;
    }

    /** The accesses the replay computes in every iteration: each saves one record per iteration. */
    static int computedEveryIteration(List<Item> items) {
        int n = 0;
        for (Item i : items) if (i.computed() && i.cond() == 0) n++;
        return n;
    }

    /**
     * The sites logged in every iteration. When they are as many as the computed accesses the loop saves
     * little: the records it drops are strided ones the codec packs to almost nothing, and without them the
     * logged ones were measured to pack worse (bench/programs/chase.c's shuffle, two loads and stores of
     * which one each is computed: the trace 0.13 % larger than full mode's).
     */
    static int loggedEveryIteration(List<Item> items) {
        int n = 0;
        for (Item i : items) if (!i.computed() && i.cond() == 0) n++;
        return n;
    }
}
