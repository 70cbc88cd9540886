package org.memtrace.heap;

import org.memtrace.event.Event;
import org.memtrace.trace.Naming;

/**
 * The names of a MadT raw line ({@code L#12:0x55d1c2a0c2bc,[heap],0x55d1c1e0a1f9}): addresses as hexadecimal
 * numbers, the region as on the symbolic line. It shares the state of a {@link SymbolicNaming}; observing an
 * event through both (a writer printing raw and symbolic lines) applies it once.
 */
public final class RawNaming implements Naming {

    private final SymbolicNaming symbolic;

    public RawNaming(SymbolicNaming symbolic) {
        this.symbolic = symbolic;
    }

    @Override
    public void observe(Event event) {
        symbolic.observe(event);
    }

    @Override
    public String region(long address) {
        return symbolic.region(address);
    }

    @Override
    public String data(long address) {
        return hex(address);
    }

    @Override
    public String code(long ip) {
        return hex(ip);
    }

    /** The block's address: the result of an allocating call, the pointer a releasing call was given. */
    @Override
    public String block(Event.Alloc allocation) {
        return switch (allocation.function()) {
            case FREE, MUNMAP -> hex(allocation.arg(0));
            case REALLOC, REALLOCARRAY -> hex(allocation.result() != 0 ? allocation.result() : allocation.arg(0));
            default -> hex(allocation.result());
        };
    }

    private static String hex(long value) {
        return "0x" + Long.toHexString(value);
    }
}
