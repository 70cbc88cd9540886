package org.memtrace.rewrite;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.memtrace.x86.Register;

/**
 * What {@link LeaOrigins}' dataflow knows before one instruction: which registers, which 8-byte frame slots
 * {@code disp(%rbp)} and which 8-byte globals at a constant address hold a pointer from which object. Two paths
 * meet ({@link #meet}) by keeping what both say: a register or a slot either path says nothing of is unknown,
 * but for a slot that one path never wrote since the function's entry (its value there is the uninitialised
 * frame's, which no correct program reads), which takes the other path's value. Globals are never
 * "never written": another function may have written one before this one ran.
 */
final class OriginState {
    /** Slots by key: a value is an origin, or null when known to hold none; an absent key is unknown when {@code clobbered}, else never written. */
    static final class Slots {
        private final Map<Long, LeaOrigins.Origin> values;
        private final Set<Long> keys; // the slots the function ever keeps a pointer in (a store elsewhere cannot matter)
        private boolean clobbered;

        Slots(Set<Long> keys, boolean clobbered) { this(new HashMap<>(), keys, clobbered); }

        private Slots(Map<Long, LeaOrigins.Origin> values, Set<Long> keys, boolean clobbered) {
            this.values = values;
            this.keys = keys;
            this.clobbered = clobbered;
        }

        Slots copy() { return new Slots(new HashMap<>(values), keys, clobbered); }

        /** The origin slot {@code k} holds, or null (unknown, none, or never written: reading such is the program's bug). */
        LeaOrigins.Origin get(long k) { return values.get(k); }

        /** Slot {@code k} now holds {@code o} (null: nothing known). */
        void put(long k, LeaOrigins.Origin o) {
            if (o == null && clobbered) values.remove(k); else values.put(k, o);
        }

        /** The slots overlapping bytes {@code [from, to)} hold nothing known (an 8-byte slot starts up to 7 bytes before). */
        void forget(long from, long to) {
            for (long at : keys) if (from - 7 <= at && at < to) put(at, null);
        }

        /** Every slot may have been written (a store through an unknown pointer). */
        void clobber() {
            values.clear();
            clobbered = true;
        }

        /** The paths' common knowledge; a slot never written on one path has the other's value. */
        static Slots meet(Slots a, Slots b) {
            Slots out = new Slots(a.keys, a.clobbered || b.clobbered);
            Set<Long> keys = new HashSet<>(a.values.keySet());
            keys.addAll(b.values.keySet());
            for (long k : keys) {
                boolean undefA = !a.values.containsKey(k) && !a.clobbered, undefB = !b.values.containsKey(k) && !b.clobbered;
                LeaOrigins.Origin va = a.values.get(k), vb = b.values.get(k);
                LeaOrigins.Origin v = undefA ? vb : undefB ? va : va != null && va.equals(vb) ? va : null;
                out.put(k, v);
            }
            return out;
        }

        @Override public boolean equals(Object o) {
            return o instanceof Slots s && s.clobbered == clobbered && s.values.equals(values);
        }

        @Override public int hashCode() { return values.hashCode() * 31 + Boolean.hashCode(clobbered); }
    }

    final Map<Register, LeaOrigins.Origin> regs;
    final Slots frame, globals;

    private OriginState(Map<Register, LeaOrigins.Origin> regs, Slots frame, Slots globals) {
        this.regs = regs;
        this.frame = frame;
        this.globals = globals;
    }

    /**
     * At the function's entry: no register holds a known pointer, no slot was written, any global may hold
     * anything; {@code frameKeys} and {@code globalKeys} are the slots the function keeps pointers in.
     */
    static OriginState entry(Set<Long> frameKeys, Set<Long> globalKeys) {
        return new OriginState(new HashMap<>(), new Slots(frameKeys, false), new Slots(globalKeys, true));
    }

    OriginState copy() { return new OriginState(new HashMap<>(regs), frame.copy(), globals.copy()); }

    /**
     * After a call: no register is known (at -O0 gcc keeps nothing in one across a call), nor any global, nor a
     * frame slot among {@code taken} (slots inside a variable whose address the function takes anywhere).
     */
    void called(Collection<Long> taken) {
        regs.clear();
        globals.clobber();
        for (long k : taken) frame.put(k, null);
    }

    static OriginState meet(OriginState a, OriginState b) {
        Map<Register, LeaOrigins.Origin> regs = new HashMap<>();
        a.regs.forEach((r, o) -> { if (o.equals(b.regs.get(r))) regs.put(r, o); });
        return new OriginState(regs, Slots.meet(a.frame, b.frame), Slots.meet(a.globals, b.globals));
    }

    @Override public boolean equals(Object o) {
        return o instanceof OriginState s && s.regs.equals(regs) && s.frame.equals(frame) && s.globals.equals(globals);
    }

    @Override public int hashCode() { return regs.hashCode() * 31 + frame.hashCode(); }
}
