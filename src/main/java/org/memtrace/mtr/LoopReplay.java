package org.memtrace.mtr;

import org.memtrace.format.SkeletonFormat;
import org.memtrace.event.Event;

/**
 * One thread's run of a skeleton loop, between its entry records and its exit record: regenerates the
 * computed accesses iteration by iteration, in program order, interleaved with the loop's logged records
 * as they arrive. It holds no access: each computed one is handed on as soon as its place is known (before
 * the next logged or marker record, or at the exit once the trip count is).
 *
 * <p>Address of computed position i in iteration k (0-based): {@code c[i] + k * s[i]}, where {@code c} folds
 * the displacement, the registers' entry values and their update when it comes before the access in the
 * body, and {@code s} is the per-iteration step of base + index×scale (a register's step is a constant,
 * or a constant plus the entry value of a register the body never writes). All in 64-bit two's complement, as
 * the CPU computes it.
 *
 * <p>A position in a block that does not run every iteration runs in iteration k only when that block's
 * marker said so (its record carries the trip register's value there, hence k); a logged position of such a
 * block without a marker is matched by its record alone, which the body's every-iteration logged positions
 * keep in its iteration. A block whose condition compares the loop's own registers (and immediates) has no
 * marker: the replay evaluates the compare per iteration from the registers' entry values and steps. One object serves every run of its loop in its thread ({@link #start}): the
 * per-run set-up is a few array fills, and the whole iterations of a loop with nothing logged are one tight
 * loop over running addresses.
 */
final class LoopReplay {
    /** Where a computed access goes, with its place in the thread's stream. */
    interface Sink {
        void computed(long address, Event.ProbeSite site);
    }

    private static final int NONE = 0xff;

    final SkeletonTable.Placed loop;
    private final long[] values, c, s, steps, running;
    private long k;
    private int pos;
    /** The conditional block whose marker came last, and its iteration; -1: none yet in this run. */
    private int marked = -1;
    private long markedK = -1;
    private boolean prepared;
    /** The last record was a call's: the callee's records follow until the loop's own next one. */
    private boolean inCall;
    /** The replay of each inner loop this one runs whole (a nest), by body position; made at its first run. */
    private final LoopReplay[] inner;

    LoopReplay(SkeletonTable.Placed loop) {
        this.loop = loop;
        int n = loop.items();
        this.values = new long[loop.steps().length];
        this.c = new long[n];
        this.s = new long[n];
        this.running = new long[n];
        this.steps = new long[values.length];
        this.inner = new LoopReplay[n];
    }

    /** A new run of the loop: forgets the previous one. */
    LoopReplay start() {
        java.util.Arrays.fill(values, 0);
        k = 0;
        pos = loop.entryItem(); // a loop entered in the middle of its body: iteration 0 starts there
        if (pos == loop.items()) { // past the body's last position: iteration 0 holds no access
            pos = 0;
            k = 1;
        }
        marked = -1;
        markedK = -1;
        prepared = false;
        inCall = false;
        return this;
    }

    void value(int slot, long v) {
        if (slot < values.length) values[slot] = v;
    }

    /**
     * A logged record of the loop's body arrived: emits the computed accesses before it.
     *
     * @return false when the record is not the one the body expects next (the replay cannot go on)
     */
    boolean logged(long ip, Sink sink) {
        if (!loop.anyLogged()) return false;
        prepare();
        inCall = false;
        Event.ProbeSite[] sites = loop.sites();
        int[] cond = loop.cond();
        long[] loggedIp = loop.loggedIp();
        long limit = k + 1; // a body whose every logged position is conditional is matched within one iteration
        while (k <= limit) {
            int p = pos;
            if (runs(cond[p])) {
                if (sites[p] != null) {
                    sink.computed(c[p] + k * s[p], sites[p]);
                } else if (loop.inner()[p] != null) {
                    if (!nest(p, sink)) return false;
                } else if (cond[p] != SkeletonTable.OPTIONAL || loggedIp[p] == ip) {
                    inCall = loop.call()[p] && loggedIp[p] == ip;
                    advance();
                    return loggedIp[p] == ip;
                }
            }
            advance();
        }
        return false;
    }

    /**
     * The marker of conditional block {@code m}: the block runs in the iteration that the trip register's
     * value {@code v} there tells. Emits what comes before the block. A side exit's marker ends the run
     * there ({@link #ends}).
     *
     * @return false when the value names no iteration at or after the current place, or a logged record is missing
     */
    boolean marker(int m, long v, Sink sink) {
        prepare();
        inCall = false;
        int trip = loop.tripSlot();
        long step = steps[trip];
        long distance = v - values[trip] - (loop.markerPhase()[m] ? step : 0);
        if (step == 0 || distance % step != 0) return false;
        long target = distance / step;
        int at = loop.markerPos()[m];
        if (at == loop.items()) {
            // a side exit after the body's last position: the whole iteration ran, so the place is the next
            // iteration's start (where a logged last position has already moved the run: picosat's propl)
            target++;
            at = 0;
        }
        if (target < k || (target == k && at < pos)) return false;
        if (!emitUntil(target, at, sink)) return false;
        if (loop.markerEnds()[m]) return true;
        marked = m;
        markedK = target;
        return true;
    }

    /**
     * The exit record with the trip register's final value: emits the rest of the computed accesses.
     *
     * @return false when the trip count does not follow from the value, or logged records are missing
     */
    boolean exit(long finalValue, Sink sink) {
        prepare();
        inCall = false;
        int trip = loop.tripSlot();
        long step = steps[trip];
        long distance = finalValue - values[trip];
        if (step == 0 || distance % step != 0) return false;
        // tested at the top below code of its own: the run leaves in iteration n after that code (the positions
        // before the test), and a trip register updated there has counted iteration n too
        long n = distance / step - (loop.tripBeforeExit() ? 1 : 0);
        int at = loop.exitItem();
        if (n < (loop.mayBeEmpty() ? 0 : 1) || k > n || (k == n && pos > at)) return false;
        return emitUntil(n, at, sink);
    }

    /**
     * Whether a record at instruction {@code ip} belongs to a function the loop's body called, not to the loop:
     * the run is inside a call and the instruction is none of the loop's logged ones.
     */
    boolean callees(long ip) {
        return inCall && java.util.Arrays.binarySearch(loop.own(), ip) < 0;
    }

    /** Whether the run is inside a call its body made (another loop's run may start there). */
    boolean inCall() {
        return inCall;
    }

    /** Whether marker {@code m} is a side exit's, after which the run is over. */
    boolean ends(int m) {
        return loop.markerEnds()[m];
    }

    private boolean runs(int cond) {
        return cond == 0 || cond == SkeletonTable.OPTIONAL || inBlock(cond);
    }

    /** Whether the conditional block of {@code cond} (m+1) runs in iteration k: its marker named k, or its computed condition holds. */
    private boolean inBlock(int cond) {
        SkeletonFormat.Condition c = loop.conditions()[cond - 1];
        if (c == null) return cond - 1 == marked && k == markedK;
        for (; c != null; c = c.and()) if (!c.holds(operand(c.slotA(), c.phase() & 1), operand(c.slotB(), c.phase() >>> 1 & 1))) return false;
        return true;
    }

    /** Slot {@code slot}'s register at the compare of iteration k: one step further when its update came before. */
    private long operand(int slot, int updated) {
        return slot == NONE ? 0 : register(slot, k + updated);
    }

    /** Slot {@code slot}'s register at the start of iteration {@code iteration}. */
    private long register(int slot, long iteration) {
        return values[slot] + iteration * steps[slot];
    }

    /** Emits the computed positions up to iteration {@code target}, position {@code at}; false at a logged one that runs. */
    private boolean emitUntil(long target, int at, Sink sink) {
        Event.ProbeSite[] sites = loop.sites();
        int[] cond = loop.cond();
        int items = sites.length;
        while (k < target || pos < at) {
            if (pos == 0 && k < target && loop.plain()) {
                wholeIterations(target, sink);
                continue;
            }
            int p = pos;
            if (cond[p] == 0 || (cond[p] != SkeletonTable.OPTIONAL && inBlock(cond[p]))) {
                if (loop.inner()[p] != null) {
                    if (!nest(p, sink)) return false;
                } else {
                    if (sites[p] == null) return false;
                    sink.computed(c[p] + k * s[p], sites[p]);
                }
            }
            if (++pos == items) {
                pos = 0;
                k++;
            }
        }
        return true;
    }

    /** Iterations k … target−1 of a body with every position computed and unconditional. */
    private void wholeIterations(long target, Sink sink) {
        Event.ProbeSite[] sites = loop.sites();
        int items = sites.length;
        long[] a = running;
        for (int i = 0; i < items; i++) a[i] = c[i] + k * s[i];
        for (long kk = k; kk < target; kk++) {
            for (int i = 0; i < items; i++) {
                sink.computed(a[i], sites[i]);
                a[i] += s[i];
            }
        }
        k = target;
    }

    /**
     * Runs the inner loop at body position {@code p} in the current iteration whole: its entry values and its trip
     * register's final value computed from this loop's registers at the iteration's start.
     *
     * @return false when those values give it no trip count
     */
    private boolean nest(int p, Sink sink) {
        SkeletonTable.Nest n = loop.nest()[p];
        LoopReplay r = inner[p];
        if (r == null) r = inner[p] = new LoopReplay(loop.inner()[p]);
        r.start();
        for (int slot = 0; slot < n.entry().length; slot++) r.value(slot, evaluate(n.entry()[slot]));
        return r.exit(evaluate(n.exit()), sink);
    }

    private long evaluate(SkeletonTable.Affine a) {
        long v = a.constant();
        for (int j = 0; j < a.slots().length; j++) v += a.factors()[j] * register(a.slots()[j], k);
        return v;
    }

    private void advance() {
        if (++pos == loop.items()) {
            pos = 0;
            k++;
        }
    }

    private void prepare() {
        if (prepared) return;
        prepared = true;
        int n = loop.items();
        System.arraycopy(loop.steps(), 0, steps, 0, steps.length);
        for (int r = 0; r < steps.length; r++) if (loop.stepSlots()[r] != NONE) steps[r] += values[loop.stepSlots()[r]];
        // entered in the middle: the registers as a whole iteration 0 would have begun with (a step back for an
        // update the partial first iteration skips), so every formula below counts iterations from 0
        for (int r = 0; r < steps.length; r++) if ((loop.entryMask() >>> r & 1) != 0) values[r] -= steps[r];
        for (int i = 0; i < n; i++) {
            if (loop.sites()[i] == null) continue;
            long a = loop.displacement()[i], stride = 0;
            int b = loop.baseSlot()[i], x = loop.indexSlot()[i];
            if (b != NONE) {
                a += values[b] + ((loop.phase()[i] & 1) != 0 ? steps[b] : 0);
                stride += steps[b];
            }
            if (x != NONE) {
                long scale = loop.scale()[i];
                a += scale * (values[x] + ((loop.phase()[i] & 2) != 0 ? steps[x] : 0));
                stride += scale * steps[x];
            }
            c[i] = a;
            s[i] = stride;
        }
    }
}
