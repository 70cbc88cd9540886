package org.memtrace.mtr;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.memtrace.event.Event;

/** The reader's site lookup: the map of named sites, and the sorted probe index a site table is searched by. */
class SiteMapTest {
    private static SiteTable.Access access(long ip) {
        return new SiteTable.Access(new Event.ProbeSite(ip, Event.ProbeKind.LOAD, 8, 0, 0, 1, 1, 1, 1, 1,
                new Event.SelectionTotals(1, 1, 1)));
    }

    @Test
    void findsEverySiteThroughGrowingAndRemovalAndTellsAccessSitesApart() {
        SiteMap map = new SiteMap();
        Map<Long, SiteTable.Site> expected = new HashMap<>();
        Random random = new Random(11);
        for (int i = 0; i < 5000; i++) {
            long key = 0x400000 + 16L * random.nextInt(1 << 20);
            SiteTable.Site site = i % 7 == 0 ? new SiteTable.Relaxed() : access(key);
            map.put(key, site);
            expected.put(key, site);
        }
        expected.forEach((key, site) -> {
            assertThat(map.get(key)).isSameAs(site);
            assertThat(map.access(key)).isSameAs(site instanceof SiteTable.Access a ? a.site() : null);
        });
        assertThat(map.get(0x3ff000)).isNull();
        assertThat(map.access(0x3ff000)).isNull();

        map.removeIf(key -> key % 32 == 0);
        expected.forEach((key, site) -> assertThat(map.get(key)).isSameAs(key % 32 == 0 ? null : site));
    }

    @Test
    void theProbeIndexIsSortedWithTheLastValueOfEachAddress() {
        long[] keys = {0x500, 0x100, 0x300, 0x100, 0x200, 0x500, 0x100};
        int[] values = {0, 1, 2, 3, 4, 5, 6};
        assertThat(ProbeIndex.sortedKeepingLast(keys, values)).containsExactly(0x100, 0x200, 0x300, 0x500, 6, 4, 2, 5);

        // keys too far apart to sort as one number each: the boxed sort gives the same
        long[] far = {Long.MAX_VALUE, 7, Long.MIN_VALUE, 7};
        assertThat(ProbeIndex.sortedKeepingLast(far, new int[] {0, 1, 2, 3})).containsExactly(Long.MIN_VALUE, 7, Long.MAX_VALUE, 2, 3, 0);

        Random random = new Random(5);
        int n = 20000;
        long[] many = new long[n];
        int[] order = new int[n];
        Map<Long, Integer> last = new HashMap<>();
        for (int i = 0; i < n; i++) {
            many[i] = 0x401000 + 4L * random.nextInt(30000);
            order[i] = i;
            last.put(many[i], i);
        }
        long[] sorted = ProbeIndex.sortedKeepingLast(many, order);
        int m = sorted.length / 2;
        assertThat(m).isEqualTo(last.size());
        for (int i = 0; i < m; i++) {
            if (i > 0) assertThat(sorted[i]).isGreaterThan(sorted[i - 1]);
            assertThat(sorted[m + i]).isEqualTo((long) last.get(sorted[i]));
        }
    }

    @Test
    void aNearlySortedIndexIsSortedInPlaceAndAnythingElseIsLeftToTheFullSort() {
        // a trampoline's probes: a few a place or two out of order
        long[] keys = {0x33, 0x11, 0x70, 0xb3, 0xb0, 0xc0};
        int[] values = {0, 1, 2, 3, 4, 5};
        assertThat(ProbeIndex.nearlySorted(keys, values)).isTrue();
        assertThat(keys).containsExactly(0x11, 0x33, 0x70, 0xb0, 0xb3, 0xc0);
        assertThat(values).containsExactly(1, 0, 2, 4, 3, 5);

        // a key twice: refused, the pairs kept and the equal keys in their order, so the full sort keeps the last
        long[] twice = {0x300, 0x100, 0x200, 0x100};
        int[] which = {0, 1, 2, 3};
        assertThat(ProbeIndex.nearlySorted(twice, which)).isFalse();
        assertThat(ProbeIndex.sortedKeepingLast(twice, which)).containsExactly(0x100, 0x200, 0x300, 3, 2, 0);

        // descending: too many moves; refused with every pair kept
        int n = 1000;
        long[] down = new long[n];
        int[] at = new int[n];
        for (int i = 0; i < n; i++) {
            down[i] = 10L * (n - i);
            at[i] = i;
        }
        assertThat(ProbeIndex.nearlySorted(down, at)).isFalse();
        for (int i = 0; i < n; i++) assertThat(down[i]).isEqualTo(10L * (n - at[i]));
        long[] sorted = ProbeIndex.sortedKeepingLast(down, at);
        for (int i = 0; i < n; i++) assertThat(sorted[n + i]).isEqualTo(n - 1 - i);
    }
}
