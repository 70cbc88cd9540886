package org.memtrace.heap;

import org.memtrace.event.Event;

/**
 * The kinds of forged names of Table II. Every prefix, live or released, is exactly seven characters, which
 * is what lets MadT release a name by "overwriting the first seven characters": the paper's realloc prefix
 * is {@code <reallo} and its mmap prefix {@code <memmap} for that reason.
 */
public enum BlockKind {
    MALLOC("<malloc", false),
    CALLOC("<calloc", false),
    REALLOC("<reallo", false),
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
     * they forge {@code <malloc}; reallocarray is realloc with an overflow check, so it forges {@code <reallo}.
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
