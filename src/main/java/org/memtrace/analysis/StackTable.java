package org.memtrace.analysis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongFunction;

/**
 * Allocation and free stacks as {@link Stack}s with dense ids from 1, in the order first seen: a writer prints
 * a stack once and refers to it by id, a heap view groups by it. A stack is its return addresses; two calls
 * with the same addresses are one stack, whatever their blocks. Frames are named once, when first seen.
 */
public final class StackTable {
    private record Key(long[] frames) {
        @Override public boolean equals(Object o) { return o instanceof Key k && Arrays.equals(frames, k.frames); }
        @Override public int hashCode() { return Arrays.hashCode(frames); }
    }

    private final Map<Key, Stack> known = new HashMap<>();
    private final List<Stack> stacks = new ArrayList<>();
    private final LongFunction<List<String>> names;
    private final LongFunction<String> frame;

    /**
     * @param names the frames a return address stands for, innermost first: the functions inlined at the call,
     *              then {@code function+offset(file:line)}
     * @param frame the return address's own frame alone, {@code function+offset(file:line)}
     */
    public StackTable(LongFunction<List<String>> names, LongFunction<String> frame) {
        this.names = names;
        this.frame = frame;
    }

    /** {@link #of(long[], boolean)} without inlined functions: a stream recorded at depth 1. */
    public Stack of(long[] frames) {
        return of(frames, false);
    }

    /**
     * The stack of these frames, a new one (id: the new {@link #size()}) the first time they are seen; with
     * {@code inlined} (the stream was recorded with stacks, {@code --stack-depth} over 1) each return address
     * names the functions inlined at it too, else the function alone, so a trace of depth 1 reads as before.
     */
    public Stack of(long[] frames, boolean inlined) {
        Stack s = known.get(new Key(frames));
        if (s != null) return s;
        long[] copy = frames.clone();
        List<String> named = new ArrayList<>(copy.length);
        for (long f : copy) {
            if (inlined) named.addAll(names.apply(f));
            else named.add(frame.apply(f));
        }
        s = new Stack(stacks.size() + 1, copy, List.copyOf(named));
        stacks.add(s);
        known.put(new Key(copy), s);
        return s;
    }

    public int size() { return stacks.size(); }
}
