package org.memtrace.rewrite;

/**
 * What a module's plan is made for: which memory instructions get a trampoline ({@code selective}, paper
 * 001's selection at {@code --omega W}; null: every one) and what the trampolines do ({@code probes}: record,
 * check, or both). Both are part of the plan's cache key. A selection traces a sample of the accesses and a
 * check must see them all, so the two do not go together.
 */
public record PlanChoice(Selective selective, Probes probes) {
    /** Every memory instruction, recorded: the tracing rewrite. */
    public static final PlanChoice TRACE = new PlanChoice(null, Probes.RECORD);

    public PlanChoice {
        if (probes == null) throw new IllegalArgumentException("a plan's probes must be given");
        if (selective != null && probes.checks()) throw new IllegalArgumentException("a check plan checks every access: no selection");
    }

    public static PlanChoice selecting(Selective selective) { return new PlanChoice(selective, Probes.RECORD); }

    public static PlanChoice probing(Probes probes) { return new PlanChoice(null, probes); }

    /**
     * The choice for {@code library}: glibc's own libraries are not checked (their string functions read past a
     * string's end by design; the check runtime's wrappers check them by what they do), so a check plan leaves
     * them alone (a {@link RewriteException} saying why) and a check-and-record plan only records them.
     */
    public PlanChoice forLibrary(java.nio.file.Path library) throws RewriteException {
        String unchecked = probes == Probes.RECORD ? null : ModuleRewrite.unchecked(library);
        if (unchecked == null) return this;
        if (probes == Probes.CHECK) throw new RewriteException(unchecked);
        return new PlanChoice(selective, Probes.RECORD);
    }

    /**
     * The version of what a check plan checks, in its key only: a change there plans the check plans again and
     * leaves the tracing plans (libc's among them) cached. 2: frame slots of -O0 functions not checked.
     * 3: those statically outside every variable reported ({@link FrameConstants}). 4: accesses through a pointer
     * from a {@code lea} of a global or a variable checked against it ({@link LeaOrigins}). 5: optimised code's
     * {@code %rsp}-based frame accesses checked ({@link RspFrames}). 6: C++ functions defined by a DIE with
     * {@code DW_AT_specification} (of a namespace or a class) get their variables; C++ globals named unmangled.
     * 7: {@link LeaOrigins} follows pointers across branches, loops and calls, and through 8-byte globals.
     */
    static final String CHECKS_VERSION = "7";

    /** What the cache key adds for this choice: nothing for {@link #TRACE}, so its plans keep their names. */
    String key() {
        return (probes != Probes.RECORD ? "+" + probes + "-v" + CHECKS_VERSION : "") + (selective != null ? "\0" + selective.key() + "\0" : "");
    }
}
