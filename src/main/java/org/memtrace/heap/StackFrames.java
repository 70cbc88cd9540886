package org.memtrace.heap;

import org.memtrace.event.Event;
import org.memtrace.symbols.AddressSpace;
import org.memtrace.symbols.LongMap;

/**
 * Allocation stacks as far as they can be trusted, and the frame that names a block (docs/stacks.md).
 *
 * <p>The agent unwinds each frame by its module's call frame information (.eh_frame, agent/common/mt_unwind.c):
 * such a frame comes tagged (bit 63) and is kept. Where the code has no FDE the agent follows the saved rbp,
 * and so did every frame of a stream recorded before the unwinder (none tagged): the return address above
 * frame k is then read from the frame of the function frame k returns into, which is right only when that
 * function keeps a frame pointer. So an untagged frame k+1 is kept only when frame k's function sets up rbp as
 * gcc does ({@code push %rbp; mov %rsp,%rbp}) in its first 160 bytes (after {@code endbr64}, or
 * {@code memtrace cc}'s probe of the push) and before the call; the stack ends at the first function that does
 * not, or whose start no symbol tells. What is kept is always a true prefix of the stack, never a stack that
 * skips a caller.
 *
 * <p>Frames below {@code main} (libc's start-up) and those of memtrace's own libraries are left out, as
 * valgrind's tools leave out what is below main: the stacks of one program are the same in every mode.
 *
 * <p>A block is named after the first frame that is not the C++ library's allocation plumbing
 * ({@code operator new}, {@code std::}, {@code __gnu_cxx::}, raw or demangled): a vector's blocks are named by
 * the user's function that grew it, not all by {@code std::__new_allocator<long>::allocate}. With one frame
 * that frame names the block, as before stacks.
 */
public final class StackFrames implements HeapTracker.Stacks {

    private final AddressSpace space;
    /** Per function start: whether it keeps a frame pointer. */
    private final LongMap<Integer> keeps = new LongMap<>();

    public StackFrames(AddressSpace space) {
        this.space = space;
    }

    @Override
    public long[] of(long first, long[] callers) {
        // a 0 word ends the frames: stacks were asked for and the chain gave none (docs/event-stream.md)
        int found = 0;
        while (found < callers.length && callers[found] != 0) found++;
        if (found == 0) return new long[] {first};
        if (found < callers.length) callers = java.util.Arrays.copyOf(callers, found);
        int n = 1;
        long frame = first;
        while (n <= callers.length) {
            long next = callers[n - 1];
            // unwound by the module's .eh_frame (bit 63): true; found by the saved rbp: true only after a set-up
            if (next >= 0 && !keepsFramePointer(frame)) break;
            frame = next & Long.MAX_VALUE;
            n++;
        }
        long[] stack = new long[n];
        int kept = 0;
        for (int i = 0; i < n; i++) {
            long f = i == 0 ? first : callers[i - 1] & Long.MAX_VALUE;
            String code = space.code(f);
            // libc's caller of main, when main has no symbol (a stripped program): it and what runs it are left out
            if (i > 0 && (code.startsWith("__libc_start_call_main") || code.startsWith("__libc_start_main"))) break;
            if (i == 0 || !memtrace(f)) stack[kept++] = f;
            if (code.startsWith("main+")) break; // what runs main is no part of the program's stack
        }
        return kept == n ? stack : java.util.Arrays.copyOf(stack, kept);
    }

    /** A frame of memtrace's own library (the runtime's main wrapper): true, but not the program's. */
    private boolean memtrace(long ip) {
        var m = space.moduleAt(ip);
        return m != null && m.name().startsWith("libmemtrace-");
    }

    @Override
    public long site(long[] stack) {
        for (int i = 0; i < stack.length - 1; i++) if (!plumbing(space.code(stack[i]))) return stack[i];
        return stack[stack.length - 1];
    }

    /** The C++ library's allocation functions and containers, as demangled and as raw names. */
    static boolean plumbing(String code) {
        String function = qualifiedName(code);
        return function.startsWith("std::") || function.startsWith("__gnu_cxx::") || function.startsWith("operator new")
                || function.startsWith("_ZNSt") || function.startsWith("_ZSt") || function.startsWith("_ZN9__gnu_cxx")
                || function.startsWith("_ZNKSt") || function.startsWith("_Znw") || function.startsWith("_Zna");
    }

    /**
     * The function's qualified name without its return type, parameters and offset:
     * {@code void std::vector<long>::_M_realloc_insert<long>(…)+130} gives {@code std::vector<long>::_M_realloc_insert<long>},
     * {@code std::vector<long> make_list(int)+4} gives {@code make_list}: the last word outside template brackets
     * before the parameter list.
     */
    static String qualifiedName(String code) {
        int depth = 0, wordStart = 0;
        for (int i = 0; i < code.length(); i++) {
            char c = code.charAt(i);
            if (c == '<') depth++;
            else if (c == '>' && depth > 0) depth--;
            else if (depth == 0 && c == ' ' && !code.startsWith("operator", wordStart)) wordStart = i + 1;
            else if (depth == 0 && c == '(') return code.substring(wordStart, i);
        }
        return code.substring(wordStart);
    }

    /** Whether the function holding the return address {@code ip} starts by setting up rbp as its frame pointer. */
    boolean keepsFramePointer(long ip) {
        long start = functionStart(ip - 1);
        if (start == 0) return false;
        Integer known = keeps.get(start);
        if (known == null) {
            known = setUp(space.codeBytes(start, SET_UP_WITHIN + 4));
            keeps.put(start, known);
        }
        // the call must come after the set-up: a call in code before it (shrink-wrapping) has the caller's rbp
        return known >= 0 && ip - 1 - start >= known;
    }

    /** How far into a function its set-up may start: memtrace cc's probe of the push comes before it. */
    private static final int SET_UP_WITHIN = 160;

    /** The offset just past {@code push %rbp; mov %rsp,%rbp} in a function's first bytes, -1 when absent. */
    static int setUp(byte[] b) {
        for (int i = 0; i + 4 <= b.length && i <= SET_UP_WITHIN; i++)
            if (b[i] == 0x55 && b[i + 1] == 0x48 && (b[i + 2] & 0xff) == 0x89 && (b[i + 3] & 0xff) == 0xe5) return i + 4;
        return -1;
    }

    /** The start of the function holding {@code ip} ({@code function+offset}), 0 when no symbol covers it. */
    private long functionStart(long ip) {
        String code = space.code(ip);
        int plus = code.lastIndexOf('+');
        if (plus <= 0 || code.startsWith("0x") || code.startsWith("+0x", plus)) return 0;
        try {
            return ip - Long.parseLong(code, plus + 1, code.length(), 10);
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
