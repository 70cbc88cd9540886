package org.memtrace.heap;

/**
 * A dynamically allocated block and its forged name, e.g. {@code <malloc0014@func1+230>}. {@code start} is
 * where the allocation began (offsets count from it even after a partial munmap), {@code end} where it ended.
 * {@code stack} is the allocation's stack, innermost return address first ({@code --stack-depth}: at least the
 * call site); {@code freeStack} the stack of the call that released it, empty while it is live.
 */
public record Block(String name, BlockKind kind, long number, long start, long end, boolean released, long[] stack,
                    long[] freeStack) {

    private static final long[] NONE = new long[0];

    /** Table II: kind prefix, the allocation number zero-padded to at least four digits, '@', the call site. */
    public static Block forge(BlockKind kind, long number, String site, long start, long end) {
        return forge(kind, number, site, start, end, NONE);
    }

    /** As {@link #forge(BlockKind, long, String, long, long)}, with the allocation's stack. */
    public static Block forge(BlockKind kind, long number, String site, long start, long end, long[] stack) {
        String digits = Long.toString(number);
        StringBuilder b = new StringBuilder(kind.prefix().length() + 6 + site.length() + 2).append(kind.prefix());
        for (int i = digits.length(); i < 4; i++) b.append('0');
        b.append(digits).append('@').append(site).append('>');
        return new Block(b.toString(), kind, number, start, end, false, stack, NONE);
    }

    /**
     * The allocation number of a forged name, live or released ({@code <malloc0014@f+2>}, {@code <freed:0014@f+2>}:
     * 14), or -1 when {@code name} is not one: the inverse of {@link #forge} for the readers of names.
     */
    public static long number(String name) {
        if (name == null || name.length() < 4 || name.charAt(0) != '<' || name.charAt(name.length() - 1) != '>') return -1;
        int i = 1;
        while (i < name.length() && (Character.isLetter(name.charAt(i)) || name.charAt(i) == ':')) i++;
        int digits = i;
        long n = 0;
        while (i < name.length() && Character.isDigit(name.charAt(i)) && i - digits < 18) n = n * 10 + (name.charAt(i++) - '0');
        return i > digits && i < name.length() && name.charAt(i) == '@' ? n : -1;
    }

    /** The call site of a forged name ({@code <malloc0003@main+20>}: {@code main+20}); any other name as it is. */
    public static String site(String name) {
        int at = name.indexOf('@');
        return at < 0 ? name : name.substring(at + 1, name.endsWith(">") ? name.length() - 1 : name.length());
    }

    /** The same block after free/munmap: the first seven characters become {@code <freed:} or {@code <unmap:}. */
    public Block release() {
        return release(NONE);
    }

    /** {@link #release()} by a call with this stack. */
    public Block release(long[] by) {
        if (released) return this;
        return new Block(kind.releasedPrefix() + name.substring(kind.prefix().length()), kind, number, start, end, true,
                stack, by);
    }
}
