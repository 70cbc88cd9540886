package org.memtrace.heap;

import org.memtrace.event.Event;

/**
 * The kinds of forged names of Table II. Releasing a name replaces its kind prefix with {@code <freed:} or
 * {@code <unmap:} (MadT: "overwriting the first seven characters"; every prefix is seven characters but
 * realloc's, which the issue and DESIGN spell {@code <realloc}: its whole prefix is replaced, so a released
 * realloc block reads {@code <freed:0003@f+9>} like every other).
 */
public enum BlockKind {
    MALLOC("<malloc", false),
    CALLOC("<calloc", false),
    REALLOC("<realloc", false),
    MEMMAP("<memmap", true),
    MREMAP("<mremap", true);

    static final String FREED = "<freed:";
    static final String UNMAPPED = "<unmap:";

    private final String prefix;
    private final boolean mapping;

    BlockKind(String prefix, boolean mapping) {
        this.prefix = prefix;
        this.mapping = mapping;
    }

    public String prefix() {
        return prefix;
    }

    /** Blocks of the mapping family live in their own pages and are released by munmap, not free. */
    public boolean isMapping() {
        return mapping;
    }

    public String releasedPrefix() {
        return mapping ? UNMAPPED : FREED;
    }

    /**
     * The kind an allocating call forges. The aligned allocators return malloc memory (free releases it), so
     * they forge {@code <malloc}; reallocarray is realloc with an overflow check, so it forges {@code <realloc}.
     * Null for the releasing calls.
     */
    public static BlockKind of(Event.AllocFunction function) {
        return switch (function) {
            case MALLOC, POSIX_MEMALIGN, ALIGNED_ALLOC, MEMALIGN, VALLOC, PVALLOC -> MALLOC;
            case CALLOC -> CALLOC;
            case REALLOC, REALLOCARRAY -> REALLOC;
            case MMAP -> MEMMAP;
            case MREMAP -> MREMAP;
            case FREE, MUNMAP -> null;
        };
    }
}
