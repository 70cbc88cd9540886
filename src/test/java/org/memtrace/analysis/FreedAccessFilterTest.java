package org.memtrace.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The allocator's own accesses to freed chunks are no use after free; the program's are, in order. */
class FreedAccessFilterTest {
    private final List<String> counted = new ArrayList<>();
    private final FreedAccessFilter<String> filter = new FreedAccessFilter<>(counted::add);

    @Test
    void mallocInternalsNeverCount() {
        // python3 in rewrite mode: tcache's key, unlink of a neighbour, the bins' fd/bk
        filter.freed("_int_free+149", 0x1000, () -> "a");
        filter.freed("unlink_chunk.constprop.0+20", 0x1008, () -> "b");
        filter.freed("_int_malloc+1203", 0x1010, () -> "c");
        filter.freed("malloc+90", 0x1018, () -> "d");
        filter.release();
        assertThat(counted).isEmpty();
    }

    @Test
    void programAccessesCountInOrder() {
        filter.freed("main+115", 0x1000, () -> "first");
        filter.freed("use+3", 0x1004, () -> "second");
        filter.release();
        assertThat(counted).containsExactly("first", "second");
    }

    @Test
    void callocsClearingOfItsNewBlockIsDropped() {
        // calloc's memset runs before the C event; the block the call returns covers both stores
        filter.freed("__memset_avx512_unaligned_erms+137", 0x2000, () -> "clear0");
        filter.freed("__memset_avx512_unaligned_erms+143", 0x2040, () -> "clear1");
        filter.allocatorCall(0x2000, 0x2168);
        filter.release();
        assertThat(counted).isEmpty();
    }

    @Test
    void aMemsetOutsideTheNextBlockCounts() {
        filter.freed("memset+10", 0x2000, () -> "inside");
        filter.freed("__memcpy_avx2_unaligned+4", 0x3000, () -> "outside");
        filter.allocatorCall(0x2000, 0x2010);
        assertThat(counted).containsExactly("outside");
        // a release (no block) lets everything held count
        filter.freed("__memmove_sse2+4", 0x2000, () -> "beforeFree");
        filter.allocatorCall(0, 0);
        assertThat(counted).containsExactly("outside", "beforeFree");
    }

    @Test
    void aHeldMemsetCountsBeforeALaterProgramAccess() {
        filter.freed("memset+10", 0x2000, () -> "memset");
        filter.freed("main+5", 0x2008, () -> "main");
        assertThat(counted).containsExactly("memset", "main");
    }

    @Test
    void functionNames() {
        assertThat(FreedAccessFilter.function("_int_free+149")).isEqualTo("_int_free");
        assertThat(FreedAccessFilter.function("unlink_chunk.constprop.0+20")).isEqualTo("unlink_chunk");
        assertThat(FreedAccessFilter.function("python3.11+0x648134")).isEqualTo("python3");
        assertThat(FreedAccessFilter.function("ns::Box::put(int)+34")).isEqualTo("ns::Box::put(int)");
    }
}
