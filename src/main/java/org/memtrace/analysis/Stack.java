package org.memtrace.analysis;

import java.util.List;

/**
 * An allocation or free stack (docs/stacks.md): its id in the run (dense from 1, in the order first seen, one
 * per distinct list of return addresses), the return addresses innermost first (element 0 the call site) and
 * their names as {@link org.memtrace.trace.Naming#frame} gave them when the stack was first seen
 * ({@code xmalloc+24(stacks.c:5)}). Two calls with the same addresses share one {@code Stack}: DHAT's program
 * point.
 */
public record Stack(int id, long[] frames, List<String> names) {

    /** The call site alone, unnamed: a stack no interpretation interned. */
    public static Stack site(long caller) {
        return new Stack(0, new long[] {caller}, List.of());
    }

    public int depth() { return frames.length; }
}
