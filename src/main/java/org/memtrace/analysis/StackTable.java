package org.memtrace.analysis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Allocation and free stacks as dense ids from 1, in the order first seen (docs/stacks.md): a writer prints a
 * stack once and refers to it by id, a heap view groups by it. A stack is its return addresses, innermost
 * first; two calls with the same addresses are one stack, whatever their blocks.
 */
public final class StackTable {
    private record Key(long[] frames) {
        @Override public boolean equals(Object o) { return o instanceof Key k && Arrays.equals(frames, k.frames); }
        @Override public int hashCode() { return Arrays.hashCode(frames); }
    }

    private final Map<Key, Integer> ids = new HashMap<>();
    private final List<long[]> stacks = new ArrayList<>();

    /** The id of {@code stack}, a new one (the new {@link #size()}) the first time it is seen. */
    public int id(long[] stack) {
        Integer known = ids.get(new Key(stack));
        if (known != null) return known;
        long[] copy = stack.clone();
        stacks.add(copy);
        ids.put(new Key(copy), stacks.size());
        return stacks.size();
    }

    /** The frames of stack {@code id}. */
    public long[] frames(int id) { return stacks.get(id - 1); }

    public int size() { return stacks.size(); }
}
