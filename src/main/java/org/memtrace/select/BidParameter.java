package org.memtrace.select;

import org.memtrace.x86.Register;

/** One of the three quantities {b, i, d} of a BID expression. */
public sealed interface BidParameter {

    /** An absent quantity: contributes nothing to the address. */
    record Nil() implements BidParameter {
        @Override
        public String toString() {
            return "nil";
        }
    }

    /** A constant part of the address: a displacement, or a static address. */
    record Immediate(long value) implements BidParameter {
        @Override
        public String toString() {
            return value < 0 ? "-0x" + Long.toHexString(-value) : "0x" + Long.toHexString(value);
        }
    }

    /**
     * A static address seen as a place ({@link StaticPlaces}): the object {@code identity} stands for (a
     * symbol, or a target no symbol contains) and an offset into it. Two places are less than a chunk apart
     * only inside one object, so the distance does not depend on where the linker puts objects. {@code got}:
     * the place is a GOT slot, the linker's indirection rather than the program's data.
     */
    record Place(long identity, String name, long offset, boolean got) implements BidParameter {
        Place(long identity, String name, long offset) {
            this(identity, name, offset, false);
        }

        /** The same object, {@code delta} bytes further on: a displacement added to a register holding the place. */
        Place plus(long delta) {
            return new Place(identity, name, offset + delta, got);
        }

        @Override
        public String toString() {
            return offset == 0 ? name : name + (offset < 0 ? "-0x" + Long.toHexString(-offset) : "+0x" + Long.toHexString(offset));
        }
    }

    /**
     * A register at one incarnation (§III-B), times the SIB scale (footnote 3 folds the scale into the
     * index): equal only if register, incarnation and scale all are.
     */
    record IncarnatedRegister(Register register, int incarnation, int scale) implements BidParameter {
        @Override
        public String toString() {
            return register.name() + "#" + incarnation + (scale > 1 ? "*" + scale : "");
        }
    }

    Nil NIL = new Nil();
}
