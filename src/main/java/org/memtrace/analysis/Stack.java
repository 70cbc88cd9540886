package org.memtrace.analysis;

import java.util.List;

/**
 * An allocation or free stack (docs/stacks.md): its id in the run (dense from 1, in the order first seen, one
 * per distinct list of return addresses), the return addresses innermost first (element 0 the call site) and
 * their frames' names as {@link org.memtrace.trace.Naming#frames} gave them when the stack was first seen
 * ({@code xmalloc+24(stacks.c:5)}): one or more per return address, as a return address inside inlined code
 * stands for the inlined functions too ({@code grow(inl.c:8)}, then {@code main+14(inl.c:20)}), so
 * {@code names} may be longer than {@code frames}. Two calls with the same addresses share one {@code Stack}:
 * DHAT's program point.
 */
public record Stack(int id, long[] frames, List<String> names) {

    /** The call site alone, unnamed: a stack no interpretation interned. */
    public static Stack site(long caller) {
        return new Stack(0, new long[] {caller}, List.of());
    }

    public int depth() { return frames.length; }

    /** Whether it tells more than the call site alone: more return addresses, or functions inlined at the site. */
    public boolean deep() { return frames.length > 1 || names.size() > 1; }
}
