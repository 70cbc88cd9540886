package org.memtrace.analysis;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Which accesses to freed memory are the program's, and so a use after free: not those the allocator makes
 * itself. glibc's malloc keeps its free lists inside freed chunks ({@code fd}/{@code bk} at offsets 0 and 8,
 * tcache's key at 8), so {@code _int_free}, {@code _int_malloc} or {@code unlink_chunk} read and write freed
 * blocks on every call; memcheck never sees them because it replaces malloc. Two rules:
 *
 * <ul>
 *   <li>an access by a function of glibc's malloc ({@link #ALLOCATOR}, by symbol, any {@code .constprop}-style
 *       suffix dropped) is never one;</li>
 *   <li>an access by memset, memcpy or memmove is held until the next allocator call: calloc clears and realloc
 *       copies into the new block before it returns, and the trace records the allocation at the return, so
 *       those writes land on memory still named freed. When that call's block covers the address the access
 *       was the allocator's and is dropped; otherwise (or at any other call, or at the end) it counts.</li>
 * </ul>
 *
 * What it gets wrong: a program's own memset of freed memory directly followed by an allocation that gets
 * that memory back is dropped; an allocator other than glibc's (jemalloc, tcmalloc, a program's own) is not
 * recognised, so its bookkeeping counts as use after free.
 *
 * <p>Python's {@code sum(range(10**5))} in rewrite mode: 19,342 accesses to freed memory before, every one
 * of them by malloc.c's functions (12 k), {@code unlink_chunk} (4 k) or calloc's/realloc's memset/memcpy.
 */
public final class FreedAccessFilter<T> {
    /** glibc 2.28 to 2.40 malloc/malloc.c and arena.c functions that touch chunks, public and static. */
    static final Set<String> ALLOCATOR = Set.of("malloc", "__libc_malloc", "free", "__libc_free", "cfree", "realloc",
            "__libc_realloc", "calloc", "__libc_calloc", "memalign", "__libc_memalign", "aligned_alloc", "posix_memalign",
            "__posix_memalign", "valloc", "__libc_valloc", "pvalloc", "__libc_pvalloc", "reallocarray", "__libc_reallocarray",
            "_int_malloc", "_int_free", "_int_realloc", "_int_memalign", "_mid_memalign", "malloc_consolidate",
            "unlink_chunk", "sysmalloc", "systrim", "munmap_chunk", "mremap_chunk", "tcache_init", "tcache_thread_shutdown",
            "tcache_get", "tcache_put", "malloc_trim", "__malloc_trim", "mtrim", "malloc_usable_size",
            "__malloc_usable_size", "musable", "int_mallinfo", "heap_trim", "shrink_heap", "_int_free_merge_chunk",
            "_int_free_create_chunk", "_int_free_maybe_consolidate", "_int_free_chunk", "__malloc_arena_thread_freeres",
            "arena_get2", "_int_new_arena", "reused_arena", "get_free_list", "ptmalloc_init");

    private record Held<T>(long address, T row) {}

    private final Consumer<T> sink;
    private final List<Held<T>> held = new ArrayList<>();

    /** {@code sink} gets every access that counts, in the trace's order. */
    public FreedAccessFilter(Consumer<T> sink) {
        this.sink = sink;
    }

    /**
     * An access that landed on freed memory: its instruction's name ({@code _int_free+149}) and address;
     * {@code row} makes what the sink keeps of it (the stage reuses its access object).
     */
    public void freed(String instruction, long address, Supplier<T> row) {
        String function = function(instruction);
        if (ALLOCATOR.contains(function)) return;
        if (blockFunction(function)) {
            held.add(new Held<>(address, row.get()));
            return;
        }
        release();
        sink.accept(row.get());
    }

    /** An allocator call whose new block spans [start, end) (start == end for a call that allocates nothing). */
    public void allocatorCall(long start, long end) {
        if (held.isEmpty()) return;
        for (Held<T> h : held) {
            if (h.address() < start || h.address() >= end) sink.accept(h.row());
        }
        held.clear();
    }

    /** The trace ended: what is still held counts. */
    public void release() {
        for (Held<T> h : held) sink.accept(h.row());
        held.clear();
    }

    /** {@code _int_free+149} → {@code _int_free}; {@code unlink_chunk.constprop.0+20} → {@code unlink_chunk}. */
    static String function(String code) {
        int plus = code.lastIndexOf('+');
        String f = plus > 0 ? code.substring(0, plus) : code;
        int dot = f.indexOf('.');
        return dot > 0 ? f.substring(0, dot) : f;
    }

    /** glibc's string functions by any of their ifunc variants: {@code __memset_avx2_unaligned_erms}. */
    private static boolean blockFunction(String function) {
        int i = 0;
        while (i < function.length() && function.charAt(i) == '_') i++;
        return function.startsWith("memset", i) || function.startsWith("memcpy", i) || function.startsWith("memmove", i)
                || function.startsWith("mempcpy", i);
    }
}
