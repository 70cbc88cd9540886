package org.memtrace.analysis;

import static org.assertj.core.api.Assertions.*;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class InstructionCountsTest {
    @Test
    void countsAgreeWithAMapThroughRunsOfOneKeyAndGrowth() {
        InstructionCounts counts = new InstructionCounts();
        Map<Long, long[]> expected = new HashMap<>();
        SplittableRandom random = new SplittableRandom(7);
        // 5,000 distinct keys grow the table several times; runs of one key take the last-key path, also
        // across a growth
        for (int i = 0; i < 200_000; i++) {
            long key = 0x400000L + 16L * random.nextInt(5_000);
            int run = 1 + random.nextInt(4);
            for (int r = 0; r < run; r++) {
                boolean store = random.nextBoolean();
                long l1 = random.nextInt(3), ll = Math.min(l1, random.nextInt(2));
                counts.add(key, store, l1 | ll << 32);
                long[] e = expected.computeIfAbsent(key, k -> new long[InstructionCounts.COUNTS]);
                int kind = store ? 1 : 0;
                e[InstructionCounts.LOADS + kind]++;
                e[InstructionCounts.L1_LOAD_MISSES + kind] += l1;
                e[InstructionCounts.LL_LOAD_MISSES + kind] += ll;
            }
        }
        Map<Long, long[]> got = new HashMap<>();
        counts.forEach((key, c) -> assertThat(got.put(key, c.clone())).isNull());
        assertThat(got).hasSameSizeAs(expected);
        expected.forEach((key, e) -> assertThat(got.get(key)).as("key %x", key).containsExactly(e));
    }
}
