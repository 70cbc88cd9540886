package org.memtrace.symbols;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IntervalsTest {

    @Test
    void putOverwritesAndTrimsWhatItOverlaps() {
        Intervals<String> map = new Intervals<>();
        map.put(0x1000, 0x5000, "a");
        map.put(0x2000, 0x3000, "b");
        assertThat(map.get(0x1fff).value()).isEqualTo("a");
        assertThat(map.get(0x2000).value()).isEqualTo("b");
        assertThat(map.get(0x3000)).isEqualTo(new Intervals.Span<>(0x3000, 0x5000, "a"));
        assertThat(map.get(0x5000)).isNull();
        map.remove(0x1800, 0x3800);
        assertThat(map.get(0x2000)).isNull();
        assertThat(map.get(0x17ff).value()).isEqualTo("a");
        assertThat(map.overlapping(0, 0x10000)).extracting(Intervals.Span::start).containsExactly(0x1000L, 0x3800L);
    }

    @Test
    void replaceRefusesASpanNoLongerThere() {
        Intervals<String> map = new Intervals<>();
        map.put(0x1000, 0x2000, "a");
        Intervals.Span<String> a = map.get(0x1000);
        map.put(0x1800, 0x2000, "b");
        assertThatThrownBy(() -> map.replace(a, "c")).isInstanceOf(IllegalArgumentException.class);
        assertThat(map.get(0x1000).value()).isEqualTo("a");
    }

    /** Property: against a byte-by-byte model, for small and page-spanning (large) intervals alike. */
    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4})
    void agreesWithAByteModel(long seed) {
        Random random = new Random(seed);
        int size = 1 << 20;
        int[] model = new int[size];
        Intervals<Integer> map = new Intervals<>();
        for (int step = 1; step < 3000; step++) {
            int start = random.nextInt(size);
            int length = random.nextInt(10) == 0 ? random.nextInt(size / 2) : 1 + random.nextInt(3 * 4096);
            int end = Math.min(size, start + length);
            boolean anything = false;
            for (int i = start; i < end && !anything; i++) anything = model[i] != 0;
            assertThat(map.overlaps(start, end)).as("step %d overlaps", step).isEqualTo(anything);
            int page = start >>> 12;
            boolean onPage = false;
            for (int i = page << 12; i < Math.min(size, (page + 1) << 12) && !onPage; i++) onPage = model[i] != 0;
            assertThat(map.touchesPage(page)).as("step %d page %d", step, page).isEqualTo(onPage);
            int op = random.nextInt(8);
            if (op == 0) {
                // a whole span gets a new value in place, as a freed block does
                Intervals.Span<Integer> s = map.get(start);
                if (s != null) {
                    Intervals.Span<Integer> n = map.replace(s, step);
                    assertThat(n).isEqualTo(new Intervals.Span<>(s.start(), s.end(), step));
                    for (long i = s.start(); i < s.end(); i++) model[(int) i] = step;
                }
            } else if (op == 1) {
                // a put exactly over one span, as a block allocated where a freed one of its size was
                Intervals.Span<Integer> s = map.get(start);
                if (s != null) {
                    map.put(s.start(), s.end(), step);
                    for (long i = s.start(); i < s.end(); i++) model[(int) i] = step;
                }
            } else {
                boolean put = op > 2;
                if (put) map.put(start, end, step);
                else map.remove(start, end);
                for (int i = start; i < end; i++) model[i] = put ? step : 0;
            }
            for (int probe = 0; probe < 20; probe++) {
                int at = random.nextBoolean() ? random.nextInt(size) : Math.max(0, Math.min(size - 1, start + random.nextInt(3) - 1));
                Intervals.Span<Integer> s = map.get(at);
                assertThat(s == null ? 0 : s.value()).as("step %d address %d", step, at).isEqualTo(model[at]);
                if (s != null) assertThat(s.contains(at)).isTrue();
            }
        }
    }
}
