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
 * with the same addresses are one stack, whatever their blocks. Frames are named once, when first asked for
 * ({@link Stack#names}), or at the latest at {@link #nameAll}: naming every stack when first seen was most of
 * {@code run --check}'s reading of a short program, for names nothing printed (issue 23).
 */
public final class StackTable {
    private record Key(long[] frames) {
        @Override public boolean equals(Object o) { return o instanceof Key k && Arrays.equals(frames, k.frames); }
        @Override public int hashCode() { return Arrays.hashCode(frames); }
    }

    private final Map<Key, Stack> known = new HashMap<>();
    private final List<Stack> stacks = new ArrayList<>();
    /** The stacks made since the last {@link #nameAll}, some perhaps named since. */
    private final List<Stack> unnamed = new ArrayList<>();
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
        s = new Stack(stacks.size() + 1, copy, () -> name(copy, inlined));
        stacks.add(s);
        unnamed.add(s);
        known.put(new Key(copy), s);
        return s;
    }

    private List<String> name(long[] frames, boolean inlined) {
        List<String> named = new ArrayList<>(frames.length);
        for (long f : frames) {
            if (inlined) named.addAll(names.apply(f));
            else named.add(frame.apply(f));
        }
        return List.copyOf(named);
    }

    /**
     * Names every stack not named yet, as the naming stands now: called before an event that may change what a
     * code address names (a module loaded or a mapping changed), so that a stack reads as when it was seen.
     */
    public void nameAll() {
        for (Stack s : unnamed) s.names();
        unnamed.clear();
    }

    public int size() { return stacks.size(); }
}
