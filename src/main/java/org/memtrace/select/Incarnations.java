package org.memtrace.select;

import org.memtrace.x86.Register;

/**
 * Register incarnation numbers of the stability analysis (§III-B): every register starts a block at
 * incarnation 0 and gets the next number each time an instruction may overwrite it. Numbers are kept per
 * enclosing register, because writing eax or al changes what [rax] addresses.
 */
final class Incarnations {
    private final int[] numbers = new int[512];

    BidParameter.IncarnatedRegister of(Register register, int scale) {
        return new BidParameter.IncarnatedRegister(register.enclosing(), numbers[slot(register)], scale);
    }

    void overwritten(Register register) {
        numbers[slot(register)]++;
    }

    private int slot(Register register) {
        return register.enclosing().id() & (numbers.length - 1);
    }
}
