package org.memtrace.heap;

import org.memtrace.event.Event;
import org.memtrace.symbols.AddressSpace;
import org.memtrace.symbols.LongMap;

/**
 * Allocation stacks as far as they can be trusted, and the frame that names a block (docs/stacks.md).
 *
 * <p>The agent walks the frame-pointer chain: the return address above frame k is read from the frame of the
 * function frame k returns into, which is right only when that function keeps a frame pointer. So frame k+1 is
 * kept only when frame k's function starts with gcc's frame set-up ({@code push %rbp; mov %rsp,%rbp}, after an
 * optional {@code endbr64}); the stack ends at the first function that does not (code built with
 * {@code -fomit-frame-pointer}, the default of {@code -O1} and up, libc's), or whose start no symbol tells.
 * What is kept is always a true prefix of the stack, never a stack that skips a caller.
 *
 * <p>A block is named after the first frame that is not the C++ library's allocation plumbing
 * ({@code operator new}, {@code std::}, {@code __gnu_cxx::}, raw or demangled): a vector's blocks are named by
 * the user's function that grew it, not all by {@code std::__new_allocator<long>::allocate}. With one frame
 * that frame names the block, as before stacks.
 */
public final class StackFrames implements HeapTracker.Stacks {

    private static final int KEEPS = 1, OMITS = 2;
    private final AddressSpace space;
    /** Per function start: whether it keeps a frame pointer. */
    private final LongMap<Integer> keeps = new LongMap<>();

    public StackFrames(AddressSpace space) {
        this.space = space;
    }

    @Override
    public long[] of(Event.Alloc a) {
        long[] callers = a.callers();
        if (callers.length == 0) return new long[] {a.caller()};
        int n = 1;
        long frame = a.caller();
        while (n <= callers.length && keepsFramePointer(frame)) frame = callers[n++ - 1];
        long[] stack = new long[n];
        stack[0] = a.caller();
        System.arraycopy(callers, 0, stack, 1, n - 1);
        return stack;
    }

    @Override
    public long site(long[] stack) {
        for (int i = 0; i < stack.length - 1; i++) if (!plumbing(space.code(stack[i]))) return stack[i];
        return stack[stack.length - 1];
    }

    /** The C++ library's allocation functions and containers, as demangled and as raw names. */
    static boolean plumbing(String function) {
        return function.startsWith("std::") || function.startsWith("__gnu_cxx::") || function.startsWith("operator new")
                || function.startsWith("_ZNSt") || function.startsWith("_ZSt") || function.startsWith("_ZN9__gnu_cxx")
                || function.startsWith("_ZNKSt") || function.startsWith("_Znw") || function.startsWith("_Zna");
    }

    /** Whether the function holding the return address {@code ip} starts by setting up rbp as its frame pointer. */
    boolean keepsFramePointer(long ip) {
        long start = functionStart(ip - 1);
        if (start == 0) return false;
        Integer known = keeps.get(start);
        if (known != null) return known == KEEPS;
        byte[] b = space.codeBytes(start, 8);
        int at = b.length >= 4 && (b[0] & 0xff) == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && (b[3] & 0xff) == 0xfa ? 4 : 0;
        boolean yes = b.length >= at + 4 && b[at] == 0x55 && b[at + 1] == 0x48 && (b[at + 2] & 0xff) == 0x89
                && (b[at + 3] & 0xff) == 0xe5;
        keeps.put(start, yes ? KEEPS : OMITS);
        return yes;
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
