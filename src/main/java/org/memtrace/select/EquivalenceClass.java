package org.memtrace.select;

import java.util.List;

/**
 * The memory references of one block whose BID expressions are equal under Eq. 1. Instrumenting the
 * representative (the first member in program order) traces the accesses of every member.
 */
public record EquivalenceClass(BidExpression expression, List<MemoryReference> members) {
    public EquivalenceClass {
        if (members.isEmpty()) {
            throw new IllegalArgumentException("an equivalence class has at least one member");
        }
        members = List.copyOf(members);
    }

    public MemoryReference representative() {
        return members.getFirst();
    }

    public int size() {
        return members.size();
    }
}
