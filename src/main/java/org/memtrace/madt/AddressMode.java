package org.memtrace.madt;

/** Which lines the MadT writer prints per event (--addresses). */
public enum AddressMode {
    RAW, SYMBOLIC, BOTH;

    boolean raw() { return this != SYMBOLIC; }

    boolean symbolic() { return this != RAW; }
}
