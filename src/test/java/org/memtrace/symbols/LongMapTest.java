package org.memtrace.symbols;

import static org.assertj.core.api.Assertions.*;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class LongMapTest {

    /** Random puts and removes over a small key set (many collisions, long probe runs) against a HashMap. */
    @Test
    void agreesWithAHashMapUnderRandomPutsAndRemoves() {
        SplittableRandom random = new SplittableRandom(42);
        LongMap<String> map = new LongMap<>();
        Map<Long, String> model = new HashMap<>();
        for (int step = 0; step < 200_000; step++) {
            // keys like block addresses (16-byte aligned), 0 and negative ones too
            long key = switch (random.nextInt(10)) {
                case 0 -> 0;
                case 1 -> -16L * random.nextInt(50);
                default -> 0x4052a0L + 16L * random.nextInt(3000);
            };
            switch (random.nextInt(4)) {
                case 0, 1 -> {
                    String v = "v" + step;
                    assertThat(map.put(key, v)).isEqualTo(model.put(key, v));
                }
                case 2 -> assertThat(map.remove(key)).isEqualTo(model.remove(key));
                default -> assertThat(map.get(key)).isEqualTo(model.get(key));
            }
            assertThat(map.size()).isEqualTo(model.size());
        }
        for (Map.Entry<Long, String> e : model.entrySet()) assertThat(map.get(e.getKey())).isEqualTo(e.getValue());
    }

    @Test
    void removesOnlyTheGivenValue() {
        LongMap<String> map = new LongMap<>();
        String a = new String("a");
        map.put(0x1000, a);
        assertThat(map.remove(0x1000, new String("a"))).isFalse();
        assertThat(map.get(0x1000)).isSameAs(a);
        assertThat(map.remove(0x1000, a)).isTrue();
        assertThat(map.get(0x1000)).isNull();
        assertThat(map.remove(0x2000, a)).isFalse();
        assertThat(map.size()).isZero();
    }

    @Test
    void emptiesAfterGrowingAndRemovingEverything() {
        LongMap<Long> map = new LongMap<>();
        for (long k = 1; k <= 10_000; k++) map.put(k << 4, k);
        assertThat(map.size()).isEqualTo(10_000);
        for (long k = 1; k <= 10_000; k++) assertThat(map.remove(k << 4)).isEqualTo(k);
        assertThat(map.size()).isZero();
        for (long k = 1; k <= 10_000; k++) assertThat(map.get(k << 4)).isNull();
    }
}
