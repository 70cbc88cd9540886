package org.memtrace.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/** Hand-worked event sequences through two cores, each count derived in the comments. */
class CoherentCachesTest {
    private static final long A = 0x1000, B = 0x1080, C = 0x1100;
    /** 2 sets of 2 ways per core; lines A, B and C all fall in set 0. */
    private static final CacheGeometry L1 = new CacheGeometry(256, 2, 64);
    private static final CacheGeometry L2 = new CacheGeometry(4096, 4, 64);

    record Transfer(int requester, int holder, long line, boolean dirty, boolean store) {}

    private final List<Transfer> seen = new ArrayList<>();
    private final CoherentCaches.Transfers log = (r, h, line, dirty, store) -> seen.add(new Transfer(r, h, line, dirty, store));

    @Test
    void pingPongOfOneLineInvalidatesAndMovesDirtyCopies() {
        CoherentCaches c = new CoherentCaches(List.of(L1, L2), true, 2, Policy.LRU, 1);
        assertThat(c.privateLevels()).isEqualTo(1);
        // core 0 loads A: misses its L1 and the shared L2
        assertThat(c.accessLine(0, A, false, log)).isEqualTo(2);
        // core 1 loads A: its L1 misses, core 0's copy is clean (no transfer), the L2 has it
        assertThat(c.accessLine(1, A + 8, false, log)).isEqualTo(1);
        // core 0 stores: an L1 hit on a clean (shared) copy, core 1's copy is invalidated
        assertThat(c.accessLine(0, A, true, log)).isEqualTo(0);
        // core 1 loads again: its copy is gone; core 0's is dirty, so a HITM: written to the L2, which then hits
        assertThat(c.accessLine(1, A + 8, false, log)).isEqualTo(1);
        // core 0 stores: its copy was cleaned (shared), so core 1's copy is invalidated again
        assertThat(c.accessLine(0, A, true, log)).isEqualTo(0);
        // core 0 stores once more: a dirty first-level copy is the only one, no snoop
        assertThat(c.accessLine(0, A, true, log)).isEqualTo(0);
        // core 1 stores: core 0's dirty copy goes to the L2 (HITM) and is invalidated; core 1's L1 misses, the L2 hits
        assertThat(c.accessLine(1, A + 8, true, log)).isEqualTo(1);

        assertThat(seen).containsExactly(new Transfer(0, 1, A, false, true), new Transfer(1, 0, A, true, false),
                new Transfer(0, 1, A, false, true), new Transfer(1, 0, A, true, true));
        assertThat(c.invalidated(0)).isEqualTo(1);
        assertThat(c.invalidated(1)).isEqualTo(2);
        assertThat(c.hitm(0)).isEqualTo(2);
        assertThat(c.hitm(1)).isZero();
        assertThat(c.stats(0)).containsExactly(new LevelStats("L1", L1, 1, 3, 1, 0, 0), new LevelStats("L2", L2, 1, 0, 1, 0, 0));
        assertThat(c.stats(1)).containsExactly(new LevelStats("L1", L1, 2, 1, 2, 1, 0), new LevelStats("L2", L2, 2, 1, 0, 0, 0));
        assertThat(c.totals()).containsExactly(new LevelStats("L1", L1, 3, 4, 3, 1, 0), new LevelStats("L2", L2, 3, 1, 1, 0, 0));
    }

    @ParameterizedTest
    @EnumSource(Policy.class)
    void anInvalidatedWayIsFilledBeforeAnyVictimIsChosen(Policy policy) {
        CoherentCaches c = new CoherentCaches(List.of(L1), false, 2, policy, 1);
        c.accessLine(0, A, false, log);
        c.accessLine(0, B, false, log);
        c.accessLine(0, A, false, log);
        // core 1's store takes A out of core 0's full set 0
        c.accessLine(1, A, true, log);
        // C fills the emptied way, so B is still there: a hit under every policy
        assertThat(c.accessLine(0, C, false, log)).isEqualTo(1);
        assertThat(c.accessLine(0, B, false, log)).isEqualTo(0);
        assertThat(c.accessLine(0, A, false, log)).as("A comes back from core 1, dirty there").isEqualTo(1);
        assertThat(seen).containsExactly(new Transfer(1, 0, A, false, true), new Transfer(0, 1, A, true, false));
        assertThat(c.stats(0)).containsExactly(new LevelStats("L1", L1, 6, 0, 4, 0, 0));
        assertThat(c.invalidated(0)).isEqualTo(1);
        assertThat(c.hitm(1)).isEqualTo(1);
    }

    @Test
    void threadsOnOneCoreShareItsCachesWithoutTransfers() {
        CoherentCaches c = new CoherentCaches(List.of(L1, L2), true, 1, Policy.LRU, 1);
        c.accessLine(0, A, true, log);
        c.accessLine(0, A, false, log);
        assertThat(seen).isEmpty();
        assertThat(c.stats(0).getFirst()).isEqualTo(new LevelStats("L1", L1, 1, 1, 0, 1, 0));
    }

    @ParameterizedTest
    @EnumSource(Policy.class)
    void oneCoreCountsWhatTheOneCoreHierarchyCounts(Policy policy) {
        List<CacheGeometry> g = List.of(new CacheGeometry(4096, 4, 64), new CacheGeometry(16384, 8, 64), new CacheGeometry(65536, 16, 64));
        CacheHierarchy one = new CacheHierarchy(g, policy, 7);
        CoherentCaches many = new CoherentCaches(g, true, 1, policy, 7);
        SplittableRandom r = new SplittableRandom(3);
        for (int i = 0; i < 50_000; i++) {
            long a = 0x10000 + r.nextLong(1 << 18);
            int size = 1 << r.nextInt(5);
            boolean store = r.nextInt(3) == 0;
            assertThat(many.access(0, a, size, store, log)).isEqualTo(one.access(a, size, store));
        }
        assertThat(many.totals()).isEqualTo(one.stats());
    }

    @Test
    void levelsOfDifferentLineSizesAreRefused() {
        assertThatThrownBy(() -> new CoherentCaches(List.of(L1, new CacheGeometry(4096, 4, 128)), true, 2, Policy.LRU, 1))
                .hasMessageContaining("same line size");
    }
}
