package org.memtrace.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.memtrace.event.Event;
import org.memtrace.trace.Naming;

/** The one freed-memory rule of the summary and the report, on hand-made allocator calls and accesses. */
class FreedMemoryTest {
    /** Instructions by address: the program's, malloc's and strlen's AVX2/EVEX loops. */
    private static final Map<Long, String> CODE = Map.of(0x401000L, "main+16", 0x402000L, "__strlen_evex+229",
            0x402100L, "__strlen_evex+24", 0x403000L, "_int_malloc+709", 0x404000L, "__strchr_avx2+90",
            0x405000L, "__stpcpy_evex+629", 0x405006L, "__stpcpy_evex+635");
    private static final Naming NAMING = new Naming() {
        @Override public void observe(Event event) {}
        @Override public String region(long address) { return "[heap]"; }
        @Override public String data(long address) { return "0x" + Long.toHexString(address); }
        @Override public String code(long ip) { return CODE.get(ip); }
        @Override public String block(Event.Alloc allocation) { return NO_BLOCK; }
    };

    private final List<String> counted = new ArrayList<>();
    private final FreedMemory<String, String> freed = new FreedMemory<>(
            (access, block) -> block + "@" + Long.toHexString(access.address()) + " by " + access.code(), counted::add);
    private long seq;

    private void call(Event.AllocFunction f, long result, long usable, String block, long... args) {
        long[] six = new long[6];
        System.arraycopy(args, 0, six, 0, args.length);
        freed.allocation(new Event.Alloc(1, f, 0x401000, result, usable, six), block);
        seq++;
    }

    private void load(long ip, long address, int size) {
        freed.access(Access.of(NAMING, seq++, 1, ip, address, size, false));
    }

    @Test
    void whatANewBlockDoesNotCoverOfAFreedOneStaysFreed() {
        call(Event.AllocFunction.MALLOC, 0x10000, 0x400, "A", 0x3f8);
        load(0x401000, 0x10100, 8);                              // live: nothing
        call(Event.AllocFunction.FREE, 0, 0, null, 0x10000);
        load(0x401000, 0x10100, 8);                              // 1
        call(Event.AllocFunction.MALLOC, 0x10000, 0x1d8, "B", 0x1d0);
        load(0x401000, 0x10100, 8);                              // B's now
        load(0x401000, 0x101e0, 8);                              // 2: A's tail, still freed
        load(0x403000, 0x101e8, 8);                              // malloc's bookkeeping: never
        call(Event.AllocFunction.MMAP, 0x10000, 0, null, 0, 0x1000);
        load(0x401000, 0x101e0, 8);                              // a mapping over it: no longer freed
        freed.release();
        assertThat(counted).containsExactly("A@10100 by main+16", "A@101e0 by main+16");
    }

    @Test
    void reallocAndReallocToZeroFreeTheOldBlockTheMmapFamilyNever() {
        call(Event.AllocFunction.MALLOC, 0x10000, 0x28, "A", 0x20);
        call(Event.AllocFunction.REALLOC, 0x20000, 0x108, "B", 0x10000, 0x100);
        load(0x401000, 0x10010, 4);                              // 1: A moved
        call(Event.AllocFunction.REALLOC, 0, 0, null, 0x20000, 0);
        load(0x401000, 0x20000, 4);                              // 2: realloc(p, 0) freed B
        call(Event.AllocFunction.MMAP, 0x7f0000000000L, 0, "M", 0, 0x2000);
        call(Event.AllocFunction.MUNMAP, 0, 0, null, 0x7f0000000000L, 0x2000);
        load(0x401000, 0x7f0000000010L, 4);                      // unmapped, not freed heap
        call(Event.AllocFunction.FREE, 0, 0, null, 0x123456);   // starts no block: nothing
        load(0x401000, 0x123456, 4);
        freed.release();
        assertThat(counted).containsExactly("A@10010 by main+16", "B@20000 by main+16");
    }

    /**
     * python3's one false positive: a string in a live block, strlen's 4-vector loop iteration aligned to 128
     * bytes, its last vector past the block in the freed rest of a block freed before.
     */
    @Test
    void aStringScansLastVectorsPastALiveBlockAreNoUse() {
        call(Event.AllocFunction.MALLOC, 0x10000, 0x400, "A", 0x3f8);
        call(Event.AllocFunction.FREE, 0, 0, null, 0x10000);
        call(Event.AllocFunction.MALLOC, 0x10000, 0x1d8, "B", 0x1d0);
        for (long v = 0x10180; v < 0x10200; v += 32) load(0x402000, v, 32);   // the last, 0x101e0, in A's freed tail
        load(0x404000, 0x101e0, 32);                             // strchr's, the same
        load(0x402000, 0x10200, 32);                             // 1: a new iteration wholly in freed memory
        load(0x402100, 0x101f0, 32);                             // 2: unaligned: the function's first load, at the string
        load(0x402000, 0x101e0, 16);                             // an SSE2 loop's: its 64-byte iteration began in B
        load(0x401000, 0x101e0, 32);                             // 3: the program's own load
        freed.release();
        assertThat(counted).containsExactly("A@10200 by __strlen_evex+229", "A@101f0 by __strlen_evex+24", "A@101e0 by main+16");
    }

    /**
     * `memtrace run -- ls /`'s two false uses after free: stpcpy's entry path loads (%rsi) then 0x20(%rsi),
     * unaligned, from a 5-byte string in a block split out of a freed stdio buffer; the second load lies in
     * the freed rest. It is an over-read, counted apart; a load that starts a scan in freed memory is not.
     */
    @Test
    void aStringFunctionsUnalignedSecondVectorPastALiveBlockIsAnOverRead() {
        call(Event.AllocFunction.MALLOC, 0x10000, 0x1000, "A", 0x1000);
        call(Event.AllocFunction.FREE, 0, 0, null, 0x10000);
        call(Event.AllocFunction.MALLOC, 0x10040, 0x18, "B", 0x6);
        load(0x405000, 0x10040, 32);                             // the string, in B
        load(0x405006, 0x10060, 32);                             // over-read: in A's freed rest, same 128 bytes
        load(0x405000, 0x10100, 32);                             // 1: a new scan of a string in freed memory
        load(0x405006, 0x10120, 32);                             // 2: its continuation, after a counted load
        load(0x401000, 0x10200, 8);                              // 3: the program's own load of freed memory
        load(0x405006, 0x10220, 32);                             // 4: the access before is not stpcpy's
        load(0x405000, 0x10048, 32);                             // B again
        load(0x405006, 0x10070, 32);                             // 5: it would leave its 128 bytes (0x70 + 32 > 0x80)
        freed.release();
        assertThat(counted).containsExactly("A@10100 by __stpcpy_evex+629", "A@10120 by __stpcpy_evex+635", "A@10200 by main+16",
                "A@10220 by __stpcpy_evex+635", "A@10070 by __stpcpy_evex+635");
        assertThat(freed.overReads()).isEqualTo(1);
    }

    @Test
    void stringScansAreKnownByTheirVariants() {
        assertThat(List.of("__strlen_evex", "__strchr_avx2_rtm", "__strchrnul_sse2", "__memchr_evex512", "__strcmp_sse42",
                "__wcslen_sse4_1", "__rawmemchr_avx2")).allMatch(FreedMemory::scan);
        assertThat(List.of("strlen", "__memset_avx2_unaligned_erms", "__memcpy_evex_unaligned", "main", "__strlenx_evex",
                "my_strlen_avx2_copy", "_int_malloc")).noneMatch(FreedMemory::scan);
    }
}
