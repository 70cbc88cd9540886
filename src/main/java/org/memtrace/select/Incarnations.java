package org.memtrace.select;

import org.memtrace.x86.Register;

import java.util.Optional;

/**
 * Register incarnation numbers of the stability analysis (§III-B): every register starts a block at
 * incarnation 0 and gets the next number each time an instruction may overwrite it. Numbers are kept per
 * enclosing register, because writing eax or al changes what [rax] addresses.
 *
 * <p>An incarnation may also carry the static address it was loaded with ({@code lea rdx, [rip+table]}),
 * the way position-independent code reaches static objects; the next overwrite forgets it.
 */
final class Incarnations {
    private static final int SLOTS = 512;
    private final int[] numbers = new int[SLOTS];
    /** The static address each register holds, a {@link BidParameter.Place} or an unplaced immediate; null if none. */
    private final BidParameter[] addresses = new BidParameter[SLOTS];

    BidParameter.IncarnatedRegister of(Register register, int scale) {
        return new BidParameter.IncarnatedRegister(register.enclosing(), numbers[slot(register)], scale);
    }

    void overwritten(Register register) {
        int slot = slot(register);
        numbers[slot]++;
        addresses[slot] = null;
    }

    void holdsStaticAddress(Register register, BidParameter address) {
        addresses[slot(register)] = address;
    }

    Optional<BidParameter> staticAddress(Register register) {
        return Optional.ofNullable(addresses[slot(register)]);
    }

    private static int slot(Register register) {
        return register.enclosing().id() & (SLOTS - 1);
    }
}
