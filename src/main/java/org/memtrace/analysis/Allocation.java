package org.memtrace.analysis;

import org.memtrace.event.Event;

/**
 * An allocator call as the trace prints it: its MadT line's number ({@code -1} for free(NULL), which prints
 * none), the name {@link org.memtrace.trace.Naming#block} gives it after the call (the block it created, or
 * the released name of the block it released), and for realloc and mremap the old block's data name as it
 * was before the call (null for the other functions and for a null old pointer). {@code stack} is the call's
 * stack as {@link org.memtrace.trace.Naming#stack} trusts it, interned and named: the call site alone at
 * {@code --stack-depth 1}.
 */
public record Allocation(long sequence, Event.Alloc event, String block, String previous, Stack stack) {

    /** An allocation known by its call site alone. */
    public Allocation(long sequence, Event.Alloc event, String block, String previous) {
        this(sequence, event, block, previous, Stack.site(event.caller()));
    }
}
