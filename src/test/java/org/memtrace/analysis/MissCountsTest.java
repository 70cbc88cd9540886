package org.memtrace.analysis;

import static org.assertj.core.api.Assertions.*;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class MissCountsTest {
    @Test
    void countsAgreeWithAMapThroughRunsOfOneKeyAndGrowth() {
        MissCounts counts = new MissCounts();
        Map<Long, long[]> expected = new HashMap<>();
        SplittableRandom random = new SplittableRandom(7);
        // 5,000 distinct keys grow the table several times; runs of one key take the last-key path, also
        // across a growth
        for (int i = 0; i < 200_000; i++) {
            long key = 0x400000L + 16L * random.nextInt(5_000);
            int run = 1 + random.nextInt(4);
            for (int r = 0; r < run; r++) {
                long l1 = random.nextInt(3), ll = random.nextInt(2);
                counts.add(key, l1, ll);
                long[] e = expected.computeIfAbsent(key, k -> new long[2]);
                e[0] += l1;
                e[1] += ll;
            }
        }
        Map<Long, long[]> got = new HashMap<>();
        counts.forEach((key, l1, ll) -> assertThat(got.put(key, new long[] {l1, ll})).isNull());
        assertThat(got).hasSameSizeAs(expected);
        expected.forEach((key, e) -> assertThat(got.get(key)).as("key %x", key).containsExactly(e[0], e[1]));
    }
}
