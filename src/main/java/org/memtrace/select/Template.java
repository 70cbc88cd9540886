package org.memtrace.select;

/**
 * The shape of a BID expression (§III-A): which of base, index, displacement is a register (R) and which
 * an immediate (I).
 */
public enum Template {
    /** base register, index register, immediate displacement: dynamic objects reached through a pointer. */
    RRI,
    /** immediate base (the static address), index register, displacement register: static objects. */
    IRR
}
