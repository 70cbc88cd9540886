package org.memtrace.mtr;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Codec 2's transform, encoded here as the runtime does it (rt_codec.c), comes back exactly. */
class SiteDeltaTest {
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED;

    @Test
    void undoesTheRuntimesTransformAcrossTagsCollisionsAndWrapAround() {
        Random random = new Random(42);
        int n = 5000;
        long[] w0 = new long[2 * n], w1 = new long[2 * n];
        int slots = 0;
        long[] sites = {0x401000, 0x401040, 0x7f0000001230L, 0x401000 + (1L << 52)}; // the last collides with the first
        for (int i = 0; i < n; i++) {
            if (i % 97 == 0) { // an event tag with a 40-byte record after it: three slots that must pass unchanged
                w0[slots] = i; w1[slots++] = Long.MIN_VALUE | (40L << 8) | 1;
                for (int k = 0; k < 2; k++) { w0[slots] = random.nextLong(); w1[slots++] = random.nextLong(); }
            }
            w0[slots] = i % 5 == 0 ? random.nextLong() : 0x1000L * i + 8 * (i % 3);
            w1[slots++] = sites[random.nextInt(sites.length)];
        }
        long[] encoded0 = encodeAsTheRuntime(w0, w1, slots);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment m = arena.allocate(16L * slots);
            for (int i = 0; i < slots; i++) {
                m.set(U64, 16L * i, encoded0[i]);
                m.set(U64, 16L * i + 8, w1[i]);
            }
            SiteDelta.undo(m);
            for (int i = 0; i < slots; i++) {
                assertThat(m.get(U64, 16L * i)).as("slot %d", i).isEqualTo(w0[i]);
                assertThat(m.get(U64, 16L * i + 8)).isEqualTo(w1[i]);
            }
        }
    }

    /** rt_codec.c's transform(): the current site's table entry kept aside until the site changes. */
    private static long[] encodeAsTheRuntime(long[] w0, long[] w1, int slots) {
        long[] table = new long[4096], out = w0.clone();
        long prevSite = 0, last = 0;
        int h = 0;
        for (int i = 0; i < slots; ) {
            if (w1[i] < 0) {
                i += 1 + (int) ((((w1[i] >>> 8) & 0xffff) + 15) / 16);
                continue;
            }
            if (w1[i] != prevSite) {
                table[h] = last;
                prevSite = w1[i];
                h = (int) ((w1[i] * 0x9E3779B97F4A7C15L) >>> 52);
                last = table[h];
            }
            out[i] = w0[i] - last;
            last = w0[i];
            i++;
        }
        return out;
    }
}
