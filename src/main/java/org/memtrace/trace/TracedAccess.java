package org.memtrace.trace;

/** One L or S line of the trace: a fault interpreted with the instruction's shape. */
public record TracedAccess(int tid, long ip, long address, int size, boolean store) {}
