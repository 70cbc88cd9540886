package org.memtrace.analysis;

import java.util.Arrays;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import org.memtrace.event.Event;
import org.memtrace.symbols.Intervals;
import org.memtrace.symbols.LongMap;

/**
 * Where memory is freed, and which accesses to it are a use after free: the one rule the run's summary
 * ({@link HeapTotals}) and the report both count by, so their counts are the same (docs/analyses.md, "Use
 * after free").
 *
 * <ul>
 *   <li>A malloc-family block (malloc, calloc, realloc, reallocarray, the aligned allocators) is freed over
 *       its extent (usable bytes, else those asked for) when free or realloc releases it. The mmap family is
 *       not the heap: its blocks are never freed here, though a new mapping covers freed memory.</li>
 *   <li>A later allocation ends freed memory where it lies, and only there: what it does not cover of a
 *       freed block stays freed (glibc splits a free chunk and keeps the rest free), as the trace still
 *       names it {@code <freed:…>}.</li>
 *   <li>An access is to freed memory when its first byte is; the allocator's own accesses do not count
 *       ({@link FreedAccessFilter}).</li>
 *   <li>Nor does a string function's over-read ({@link #overRead}): glibc's strlen, strchr, strcmp, memchr
 *       and the like find the end of a string by loading whole aligned vectors, four a loop iteration, so
 *       they read up to 4 × 64 bytes past its end. An aligned vector load by one of them whose iteration
 *       (the 4-vector group aligned to its own size) began in memory that is not freed is that: the string
 *       was there, and the vector only spills into a freed neighbour. Such a group never crosses a page, so
 *       the read cannot fault. A string wholly in freed memory still counts: the function's first load
 *       starts at the string. Their entry paths load unaligned vectors from the string's start on ({@code
 *       __stpcpy_evex}: {@code (%rsi)}, then {@code 0x20(%rsi)}, when the string lies low enough in its
 *       128 bytes): such a load is an over-read too when the thread's access right before it was a load by
 *       the same function, lower in the same group and not itself a use after free. Over-reads are counted
 *       apart ({@link #overReads}), as what they are.</li>
 * </ul>
 *
 * What it gets wrong: a string that runs from a live block on into freed memory (an overflow) is missed
 * while its end lies in the same group as the live bytes; memory freed before the trace began, or by an
 * allocator the wrappers do not see, is not freed here.
 *
 * <p>{@code B} is what the caller keeps about a block (handed back with each access to it once freed),
 * {@code R} what its sink gets for each access that counts.
 */
public final class FreedMemory<B, R> {
    /** glibc's string scans: base names of the functions whose ifunc variants read aligned vectors past the end. */
    static final Set<String> SCANS = Set.of("strlen", "strnlen", "strchr", "strchrnul", "strrchr",
            "strcmp", "strncmp", "strcasecmp", "strncasecmp", "strcasecmp_l", "strncasecmp_l", "memchr", "rawmemchr", "memrchr",
            "strcpy", "stpcpy", "strncpy", "stpncpy", "strcat", "strncat", "strspn", "strcspn", "strpbrk", "strstr",
            "wcslen", "wcsnlen", "wcschr", "wcsrchr", "wcscmp", "wcsncmp", "wmemchr", "wcscpy", "wcpcpy");
    private static final long PAGE = 4096;

    private record Live<B>(long extent, B block) {}

    private final LongMap<Live<B>> live = new LongMap<>();
    /** Freed pieces not covered again, each with its block. */
    private final Intervals<B> freed = new Intervals<>();
    private final BiFunction<Access, B, R> row;
    private final FreedAccessFilter<R> filter;
    private boolean anyFreed;
    private long overReads;
    /** The access before this one (0 ip: none since the last allocator call), and whether it counted. */
    private long previousIp, previousAddress;
    private int previousTid;
    private boolean previousLoad, previousCounted;
    /**
     * Pages found clean (no freed piece on them) by the page's hash, valid while their stamp is the current
     * one: the next allocator call takes a new stamp. A run's accesses move between a few pages (the stack,
     * an arena, globals): one remembered page missed at nearly every access.
     */
    private static final int CLEAN_BITS = 10;
    private final long[] cleanPages = new long[1 << CLEAN_BITS];
    private final int[] cleanStamps = new int[1 << CLEAN_BITS];
    /** Starts at 1: the zeros of {@link #cleanStamps} are empty slots. */
    private int cleanStamp = 1;

    /** {@code row} makes what {@code sink} keeps of an access that counts (the stage reuses its access objects). */
    public FreedMemory(BiFunction<Access, B, R> row, Consumer<R> sink) {
        this.row = row;
        this.filter = new FreedAccessFilter<>(sink);
    }

    /** An allocator call; {@code block}: the caller's record of the block it allocates (unused for a release). */
    public void allocation(Event.Alloc a, B block) {
        if (cleanStamp == Integer.MAX_VALUE) {
            Arrays.fill(cleanStamps, 0);
            cleanStamp = 0;
        }
        cleanStamp++;
        previousIp = 0;
        boolean allocates = a.function() != Event.AllocFunction.FREE && a.function() != Event.AllocFunction.MUNMAP
                && a.result() != 0 && a.result() != -1;
        long extent = a.usable() > 0 ? a.usable() : Math.max(1, HeapTotals.requested(a));
        filter.allocatorCall(allocates ? a.result() : 0, allocates ? a.result() + extent : 0);
        switch (a.function()) {
            case FREE -> release(a.arg(0));
            case MUNMAP -> {}
            case MMAP, MREMAP -> {
                if (!allocates) return;
                long length = a.function() == Event.AllocFunction.MMAP ? a.arg(1) : a.arg(2);
                cover(a.result(), a.usable() > 0 ? a.usable() : Math.max(1, (length + PAGE - 1) & -PAGE));
            }
            case REALLOC, REALLOCARRAY -> {
                boolean overflow = a.function() == Event.AllocFunction.REALLOCARRAY && Math.multiplyHigh(a.arg(1), a.arg(2)) != 0;
                // glibc: realloc(p, 0) frees p and returns NULL; a failure leaves p alone
                if (a.result() == 0) {
                    if (a.arg(0) != 0 && HeapTotals.requested(a) == 0 && !overflow) release(a.arg(0));
                    return;
                }
                if (a.arg(0) != 0) release(a.arg(0));
                allocate(a.result(), extent, block);
            }
            default -> {
                if (a.result() != 0) allocate(a.result(), extent, block);
            }
        }
    }

    /** New memory over freed pieces: their {@code <freed:…>} names end there. */
    private void cover(long start, long extent) {
        if (anyFreed) freed.remove(start, start + extent);
    }

    /** A malloc-family block, freed over {@code extent} when released. */
    private void allocate(long start, long extent, B block) {
        cover(start, extent);
        live.put(start, new Live<>(extent, block));
    }

    private void release(long pointer) {
        if (pointer == 0) return;
        Live<B> b = live.remove(pointer);
        if (b == null) return;
        freed.put(pointer, pointer + b.extent(), b.block());
        anyFreed = true;
    }

    /** An access: counted (through the sink, maybe later: {@link FreedAccessFilter}) when it is a use after free. */
    public void access(Access access) {
        if (!anyFreed) return;
        long ip = previousIp, before = previousAddress;
        boolean load = previousLoad, counted = previousCounted, sameThread = previousTid == access.tid();
        previousIp = access.ip();
        previousAddress = access.address();
        previousTid = access.tid();
        previousLoad = !access.store();
        previousCounted = false;
        long address = access.address();
        long page = address >>> 12;
        int slot = (int) ((page * 0x9E3779B97F4A7C15L) >>> 64 - CLEAN_BITS);
        if (cleanPages[slot] == page && cleanStamps[slot] == cleanStamp) return;
        Intervals.Span<B> s = freed.get(address);
        if (s == null) {
            if (!freed.touchesPage(page)) {
                cleanPages[slot] = page;
                cleanStamps[slot] = cleanStamp;
            }
            return;
        }
        String code = access.code();
        if (!access.store() && (overRead(code, address, access.size())
                || sameThread && load && !counted && ip != 0 && continues(code, address, access.size(), before, access.codeAt(ip)))) {
            overReads++;
            return;
        }
        previousCounted = true;
        B block = s.value();
        filter.freed(code, address, () -> row.apply(access, block));
    }

    /**
     * Whether a load of {@code size} bytes at {@code address} (freed) by instruction {@code code} is a string
     * scan's aligned vector whose loop iteration began outside freed memory.
     */
    boolean overRead(String code, long address, int size) {
        if ((size != 16 && size != 32 && size != 64) || (address & (size - 1)) != 0) return false;
        if (!scan(FreedAccessFilter.function(code))) return false;
        long group = address & -(4L * size);
        for (long at = group; at < address; ) {
            Intervals.Span<B> s = freed.get(at);
            if (s == null) return true;
            at = s.end();
        }
        return false;
    }

    /**
     * Whether a vector load at {@code address} by {@code code} continues a scan whose previous load, by
     * {@code previousCode}, was at {@code before}: both in one aligned group of four vectors, this one after.
     */
    static boolean continues(String code, long address, int size, long before, String previousCode) {
        if (size != 16 && size != 32 && size != 64) return false;
        long group = 4L * size;
        if ((address & (group - 1)) + size > group || before >= address || (before & -group) != (address & -group)) return false;
        String function = FreedAccessFilter.function(code);
        return scan(function) && previousCode != null && function.equals(FreedAccessFilter.function(previousCode));
    }

    /** Loads of freed memory that were a string function's vector over-read, not counted as use after free. */
    public long overReads() { return overReads; }

    /** {@code __strlen_evex}, {@code __strchr_sse2}, {@code __memchr_avx2_rtm}: a scan's ifunc variant. */
    static boolean scan(String function) {
        int i = 0;
        while (i < function.length() && function.charAt(i) == '_') i++;
        int end = function.indexOf('_', i);
        while (end > 0) {
            if (SCANS.contains(function.substring(i, end)) && variant(function.substring(end + 1))) return true;
            end = function.indexOf('_', end + 1);
        }
        return false;
    }

    private static boolean variant(String suffix) {
        return suffix.startsWith("evex") || suffix.startsWith("avx") || suffix.startsWith("sse");
    }

    /** The accesses still held count now (the trace ended). */
    public void release() {
        filter.release();
    }
}
