package org.memtrace.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class CacheHierarchyTest {

    private record Access(long address, int size, boolean store) {}

    /** Seeded random accesses over a footprint a few times the first level, sizes 1–16 at any alignment. */
    private static List<Access> random(long seed, long footprint, int n) {
        SplittableRandom r = new SplittableRandom(seed);
        List<Access> list = new ArrayList<>();
        for (int i = 0; i < n; i++)
            list.add(new Access(0x10000 + r.nextLong(footprint), 1 << r.nextInt(5), r.nextInt(3) == 0));
        return list;
    }

    /** Several interleaved strided walks (arrays of structs, column walks), some straddling lines. */
    private static List<Access> strided(long seed, int n) {
        SplittableRandom r = new SplittableRandom(seed);
        long[] base = {0x400000, 0x7f0000001000L, 0x555500000030L};
        long[] stride = {8, 72, 4096 + 24};
        List<Access> list = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int k = i % 3;
            long a = base[k] + (i / 3) * stride[k] % (1 << 20);
            list.add(new Access(a, k == 1 ? 16 : 8, r.nextInt(4) == 0));
        }
        return list;
    }

    static Stream<Arguments> configurations() {
        List<List<CacheGeometry>> hierarchies = List.of(
                List.of(new CacheGeometry(1024, 1, 64)),
                List.of(new CacheGeometry(4096, 4, 64)),
                List.of(new CacheGeometry(2048, 2, 32), new CacheGeometry(16384, 8, 64)),
                List.of(new CacheGeometry(4096, 8, 64), new CacheGeometry(32768, 4, 64), new CacheGeometry(131072, 16, 128)),
                List.of(new CacheGeometry(512, 8, 64)));
        List<Arguments> args = new ArrayList<>();
        for (Policy p : Policy.values())
            for (List<CacheGeometry> h : hierarchies)
                for (String stream : List.of("random", "strided"))
                    args.add(Arguments.of(p, h, stream));
        return args.stream();
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("configurations")
    void agreesExactlyWithTheReferenceModel(Policy policy, List<CacheGeometry> levels, String stream) {
        long seed = 42;
        List<Access> accesses = stream.equals("random") ? random(7, 4 * levels.getLast().size(), 60_000) : strided(11, 60_000);
        CacheHierarchy fast = new CacheHierarchy(levels, policy, seed);
        ReferenceCache slow = new ReferenceCache(levels, policy, seed);
        for (int i = 0; i < accesses.size(); i++) {
            Access a = accesses.get(i);
            long got = fast.access(a.address(), a.size(), a.store());
            List<Integer> want = slow.access(a.address(), a.size(), a.store());
            long l1 = want.stream().filter(r -> r > 0).count();
            long ll = want.stream().filter(r -> r == levels.size()).count();
            assertThat(CacheHierarchy.firstLevelMisses(got)).as("access %d %s: first-level misses", i, a).isEqualTo(l1);
            assertThat(CacheHierarchy.lastLevelMisses(got)).as("access %d %s: last-level misses", i, a).isEqualTo(ll);
        }
        List<List<Long>> counts = fast.stats().stream()
                .map(s -> List.of(s.loads(), s.stores(), s.loadMisses(), s.storeMisses(), s.writebacks())).toList();
        assertThat(counts).isEqualTo(slow.counts());
        // the streams are chosen to exercise every level: misses and writebacks everywhere
        assertThat(fast.stats()).allSatisfy(s -> assertThat(s.misses()).isPositive());
        assertThat(fast.stats().getFirst().writebacks()).isPositive();
    }

    private static CacheHierarchy oneSet(int ways, Policy policy) {
        return new CacheHierarchy(List.of(new CacheGeometry(64L * ways, ways, 64)), policy, 1);
    }

    /** Touches lines (by number) of a one-set cache; returns which missed, as a string of h and m. */
    private static String run(CacheHierarchy c, int... lines) {
        StringBuilder sb = new StringBuilder();
        for (int l : lines) sb.append(c.access(64L * l, 8, false) == 0 ? 'h' : 'm');
        return sb.toString();
    }

    @Test
    void policiesDifferAsTheirDefinitionsSay() {
        // 2 ways: A B A C A — LRU keeps A (evicts B); FIFO evicts A (oldest fill) at C, so the last A misses.
        assertThat(run(oneSet(2, Policy.LRU), 1, 2, 1, 3, 1)).isEqualTo("mmhmh");
        assertThat(run(oneSet(2, Policy.FIFO), 1, 2, 1, 3, 1)).isEqualTo("mmhmm");
        // 4-way tree PLRU: A B C D fill ways 0-3; the hit on A points the root right and the right node at
        // C (D was touched after C), so E replaces C; E points the root left, where the left node points at
        // B (A was touched after B), so the returning C replaces B; A still hits, B misses.
        assertThat(run(oneSet(4, Policy.PLRU), 1, 2, 3, 4, 1, 5, 3, 1, 2)).isEqualTo("mmmmhmmhm");
        // LRU on the same sequence evicts B at E, so C and A hit and B misses.
        assertThat(run(oneSet(4, Policy.LRU), 1, 2, 3, 4, 1, 5, 3, 1, 2)).isEqualTo("mmmmhmhhm");
    }

    @Test
    void accessesSpanningLinesAreOneAccessPerLine() {
        CacheHierarchy c = new CacheHierarchy(List.of(new CacheGeometry(32768, 8, 64)), Policy.LRU, 1);
        assertThat(CacheHierarchy.firstLevelMisses(c.access(60, 8, false))).isEqualTo(2);
        assertThat(c.access(62, 4, true)).isZero();
        assertThat(c.stats().getFirst().accesses()).isEqualTo(4);
        assertThat(c.stats().getFirst().stores()).isEqualTo(2);
        // a size of 0 (instruction shape unknown) is one byte
        assertThat(CacheHierarchy.firstLevelMisses(c.access(127, 0, false))).isZero();
        assertThat(CacheHierarchy.firstLevelMisses(c.access(128, 0, false))).isEqualTo(1);
    }

    @Test
    void dirtyVictimsAreWrittenBackOnceAndReachTheNextLevel() {
        CacheHierarchy c = new CacheHierarchy(List.of(new CacheGeometry(64, 1, 64), new CacheGeometry(256, 4, 64)), Policy.LRU, 1);
        c.access(0, 8, true);     // L1 and L2 miss; L1 line dirty
        c.access(8, 8, true);     // hit, still one dirty line
        c.access(64, 8, false);   // evicts line 0: one writeback into L2 (where line 0 already is)
        c.access(128, 8, false);  // evicts clean line 1: no writeback
        LevelStats l1 = c.stats().get(0), l2 = c.stats().get(1);
        assertThat(l1.writebacks()).isEqualTo(1);
        assertThat(l2.writebacks()).isZero();
        assertThat(l2.accesses()).as("writebacks are not demand accesses").isEqualTo(3);
        assertThat(l1.storeMisses()).isEqualTo(1);
        assertThat(l2.storeMisses()).isEqualTo(1);
    }

    @Test
    void geometriesParseAndRefuseWhatHardwareCannotBe() {
        assertThat(CacheGeometry.parse("32k:8:64")).isEqualTo(new CacheGeometry(32768, 8, 64));
        assertThat(CacheGeometry.parse("1M:16:64").sets()).isEqualTo(1024);
        assertThat(CacheGeometry.parse("12m:12:64")).hasToString("12m:12:64");
        assertThatThrownBy(() -> CacheGeometry.parse("32k:8")).hasMessageContaining("SIZE:WAYS:LINE");
        assertThatThrownBy(() -> CacheGeometry.parse("32k:x:64")).hasMessageContaining("SIZE:WAYS:LINE");
        assertThatThrownBy(() -> CacheGeometry.parse("32k:8:48")).hasMessageContaining("power of two");
        assertThatThrownBy(() -> CacheGeometry.parse("96k:8:64")).hasMessageContaining("not a power of two");
        assertThatThrownBy(() -> new CacheHierarchy(List.of(CacheGeometry.parse("48k:12:64")), Policy.PLRU, 1))
                .hasMessageContaining("power-of-two associativity");
    }
}
