package org.memtrace.analysis;

import java.util.List;
import java.util.function.Supplier;

/**
 * An allocation or free stack (docs/stacks.md): its id in the run (dense from 1, in the order first seen, one
 * per distinct list of return addresses), the return addresses innermost first (element 0 the call site) and
 * their frames' names as {@link org.memtrace.trace.Naming#frames} gives them ({@code xmalloc+24(stacks.c:5)}):
 * one or more per return address, as a return address inside inlined code stands for the inlined functions
 * too ({@code grow(inl.c:8)}, then {@code main+14(inl.c:20)}), so {@code names} may be longer than
 * {@code frames}. Two calls with the same addresses share one {@code Stack}: DHAT's program point.
 * <p>
 * A {@link StackTable} names a stack when something first asks for its names (a report, the summary, a text
 * trace), not when it is seen: most stacks of a run are never shown, and naming one reads the line tables and
 * inlined calls of every module its frames pass through (issue 23: run --check's fixed cost). The table names
 * the stacks still unnamed before anything that could change what a code address names ({@link StackTable#nameAll}).
 */
public final class Stack {
    private final int id;
    private final long[] frames;
    private Supplier<List<String>> namer;
    private List<String> names;

    /** A stack whose names are known. */
    public Stack(int id, long[] frames, List<String> names) {
        this.id = id;
        this.frames = frames;
        this.names = names;
    }

    /** A stack named by {@code namer} the first time its names are asked for. */
    Stack(int id, long[] frames, Supplier<List<String>> namer) {
        this.id = id;
        this.frames = frames;
        this.namer = namer;
    }

    /** The call site alone, unnamed: a stack no interpretation interned. */
    public static Stack site(long caller) {
        return new Stack(0, new long[] {caller}, List.of());
    }

    public int id() { return id; }

    public long[] frames() { return frames; }

    /** The frames' names, innermost first (named now if not yet). */
    public List<String> names() {
        if (names == null) {
            names = namer.get();
            namer = null;
        }
        return names;
    }

    public int depth() { return frames.length; }

    /** Whether it tells more than the call site alone: more return addresses, or functions inlined at the site. */
    public boolean deep() { return frames.length > 1 || names().size() > 1; }
}
