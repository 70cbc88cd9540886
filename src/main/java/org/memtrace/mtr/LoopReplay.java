package org.memtrace.mtr;

import org.memtrace.event.Event;

/**
 * One thread's run of a skeleton loop, between its entry records and its exit record: regenerates the
 * computed accesses iteration by iteration, in program order, interleaved with the loop's logged records
 * as they arrive. It holds no access: each computed one is handed on as soon as its place is known (before
 * the next logged record, or at the exit once the trip count is).
 *
 * <p>Address of computed position i in iteration k (0-based): {@code c[i] + k * s[i]}, where {@code c} folds
 * the displacement, the registers' entry values and their update when it comes before the access in the
 * body, and {@code s} is the per-iteration step of base + index×scale (a register's step is a constant,
 * or a constant plus the entry value of a register the body never writes). All in 64-bit two's complement, as
 * the CPU computes it.
 */
final class LoopReplay {
    /** Where a computed access goes, with its place in the thread's stream. */
    interface Sink {
        void computed(long address, Event.ProbeSite site);
    }

    private static final int NONE = 0xff;

    final SkeletonTable.Placed loop;
    private final long[] values;
    private long[] c, s, steps;
    private long k;
    private int pos;

    LoopReplay(SkeletonTable.Placed loop) {
        this.loop = loop;
        this.values = new long[loop.steps().length];
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
        while (true) {
            if (loop.sites()[pos] != null) {
                sink.computed(c[pos] + k * s[pos], loop.sites()[pos]);
                advance();
                continue;
            }
            boolean match = loop.loggedIp()[pos] == ip;
            advance();
            return match;
        }
    }

    /**
     * The exit record with the trip register's final value: emits the rest of the computed accesses.
     *
     * @return false when the trip count does not follow from the value, or logged records are missing
     */
    boolean exit(long finalValue, Sink sink) {
        prepare();
        int trip = loop.tripSlot();
        long step = steps[trip];
        long distance = finalValue - values[trip];
        if (step == 0 || distance % step != 0) return false;
        long n = distance / step;
        if (n < 1 || k > n || (k == n && pos != 0)) return false;
        while (k < n) {
            if (loop.sites()[pos] == null) return false;
            sink.computed(c[pos] + k * s[pos], loop.sites()[pos]);
            advance();
        }
        return true;
    }

    private void advance() {
        if (++pos == loop.items()) {
            pos = 0;
            k++;
        }
    }

    private void prepare() {
        if (c != null) return;
        int n = loop.items();
        c = new long[n];
        s = new long[n];
        steps = loop.steps().clone();
        for (int r = 0; r < steps.length; r++) if (loop.stepSlots()[r] != NONE) steps[r] += values[loop.stepSlots()[r]];
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
