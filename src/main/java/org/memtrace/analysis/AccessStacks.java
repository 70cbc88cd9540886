package org.memtrace.analysis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.memtrace.trace.Naming;

/**
 * Access stacks (docs/stacks.md, "Access stacks") as {@link Stack}s, ids dense from 1 in the order first seen,
 * apart from the allocation stacks' ({@link StackTable}): element 0 is the accessing instruction, not a return
 * address, so it is named as the trace names an access's code, {@code function+offset(file:line)}, or, in
 * inlined code, the chain of inlined calls at the instruction ({@link Naming#inlinedSource}); each return
 * address above it as an allocation stack's frame ({@link Naming#frames}). Named when first seen, while the
 * naming is current.
 */
final class AccessStacks {
    private record Key(long[] frames) {
        @Override public boolean equals(Object o) { return o instanceof Key k && Arrays.equals(frames, k.frames); }
        @Override public int hashCode() { return Arrays.hashCode(frames); }
    }

    private final Naming naming;
    private final Map<Key, Stack> known = new HashMap<>();

    AccessStacks(Naming naming) {
        this.naming = naming;
    }

    /** The stack of an access by instruction {@code ip} under the recorded return addresses {@code callers}. */
    Stack of(long ip, long[] callers) {
        long[] frames = naming.accessStack(ip, callers);
        Stack s = known.get(new Key(frames));
        if (s != null) return s;
        List<String> names = new ArrayList<>(instruction(ip));
        for (int i = 1; i < frames.length; i++) names.addAll(naming.frames(frames[i]));
        s = new Stack(known.size() + 1, frames, List.copyOf(names));
        known.put(new Key(frames), s);
        return s;
    }

    /** The instruction's own frames: the inlined calls at it with their lines, or {@code function+offset(file:line)}. */
    private List<String> instruction(long ip) {
        String chain = naming.inlinedSource(ip);
        if (chain != null && chain.indexOf('(') >= 0) return List.of(chain.split(";"));
        String code = naming.code(ip);
        return List.of(chain == null ? code : code + '(' + chain + ')');
    }
}
