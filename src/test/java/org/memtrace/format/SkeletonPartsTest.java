package org.memtrace.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** How a memtrace_skel nest numbers its inner loop: within its object file's part, from the part's first loop record. */
class SkeletonPartsTest {
    /** The rewriter writes one part: its loops' numbers are their indexes in the file. */
    @Test
    void theRewritersPartNumbersItsLoopsFromZero() {
        assertThat(SkeletonParts.number(0, 0)).isZero();
        assertThat(SkeletonParts.number(5, 0)).isEqualTo(5);
    }

    /**
     * A linked section of three parts of 3, 2 and 4 loop records: each part's number 0 is its own first record
     * (0, 3 and 5 across the section), and reading a number back gives the record it was written for.
     */
    @Test
    void eachPartCountsFromItsOwnFirstLoopRecord() {
        int[] starts = {0, 3, 5};
        int[] sizes = {3, 2, 4};
        for (int p = 0; p < starts.length; p++) {
            assertThat(SkeletonParts.loop(0, starts[p], starts[p] + sizes[p])).isEqualTo(starts[p]);
            for (int loop = starts[p]; loop < starts[p] + sizes[p]; loop++) {
                long n = SkeletonParts.number(loop, starts[p]);
                assertThat(n).isEqualTo(loop - starts[p]);
                assertThat(SkeletonParts.loop(n, starts[p], starts[p] + sizes[p])).isEqualTo(loop);
            }
        }
        assertThat(SkeletonParts.loop(1, 3, 5)).isEqualTo(4); // the second part's second record
    }

    /**
     * A number names a record of its own part read before the nest's outer loop, or none: not one of the part's
     * later records, not one of an earlier part (a negative number), not past the part.
     */
    @Test
    void aNumberOutsideItsPartNamesNoLoop() {
        assertThat(SkeletonParts.loop(-1, 3, 5)).isEqualTo(-1);
        assertThat(SkeletonParts.loop(2, 3, 5)).isEqualTo(-1); // the part has read records 3 and 4 only
        assertThat(SkeletonParts.loop(0, 5, 5)).isEqualTo(-1); // a nest in the part's first record
        assertThat(SkeletonParts.loop(Long.MAX_VALUE, 0, 10)).isEqualTo(-1);
        assertThat(SkeletonParts.loop(1L << 32, 0, 10)).isEqualTo(-1); // not truncated to 0
        assertThatThrownBy(() -> SkeletonParts.number(2, 3)).isInstanceOf(IllegalArgumentException.class);
    }

    /** The version record opens a part; readers before version 2 refuse its type, so the type stays 6. */
    @Test
    void theVersionRecordOpensAPart() {
        assertThat(SkeletonParts.VERSION_RECORD).isEqualTo(6);
    }
}
