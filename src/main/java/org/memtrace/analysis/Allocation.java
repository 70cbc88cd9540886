package org.memtrace.analysis;

import org.memtrace.event.Event;

/**
 * An allocator call as the trace prints it: its MadT line's number ({@code -1} for free(NULL), which prints
 * none), the name {@link org.memtrace.trace.Naming#block} gives it after the call (the block it created, or
 * the released name of the block it released), and for realloc and mremap the old block's data name as it
 * was before the call (null for the other functions and for a null old pointer).
 */
public record Allocation(long sequence, Event.Alloc event, String block, String previous) {}
