package org.memtrace.mtr;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Codec 3's packing, encoded here as the runtime does it (rt_file.c, pack), comes back exactly. */
class PackedSlotsTest {
    @Test
    void unpacksTheRuntimesPackingAcrossTagsCollisionsAndWrapAround() throws Exception {
        Random random = new Random(7);
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
        byte[] packed = packAsTheRuntime(w0, w1, slots);
        assertThat(packed.length).as("fewer bytes than the slots").isLessThan(16 * slots);
        // in a larger array than the packing, as the reader's reused buffer is
        byte[] buffer = Arrays.copyOf(packed, packed.length + 100);
        long[] words = new long[2 * slots];
        PackedSlots.unpack(buffer, packed.length, words, 2 * slots);
        for (int i = 0; i < slots; i++) {
            assertThat(words[2 * i]).as("slot %d", i).isEqualTo(w0[i]);
            assertThat(words[2 * i + 1]).isEqualTo(w1[i]);
        }
        int cut = packed.length - 1, count = 2 * slots;
        assertThatThrownBy(() -> PackedSlots.unpack(buffer, cut, words, count))
                .isInstanceOf(MtrFormatException.class);
    }

    @Test
    void numbersOfEveryLengthComeBackInTheMiddleAndAtTheEndOfAChunk() throws Exception {
        // address differences whose zigzag varints take 1 to 10 bytes; each run ends on another length, so
        // the last number of the chunk is read with fewer than 8 bytes left as well as with more
        long[] deltas = new long[10];
        for (int k = 1; k < 10; k++) deltas[k - 1] = (k % 2 == 0 ? -1L : 1L) << (7 * k - 2);
        deltas[9] = Long.MIN_VALUE;
        for (int last = 0; last < 10; last++) {
            int slots = 30 + last;
            long[] w0 = new long[slots], w1 = new long[slots];
            long address = 0x7f0000000000L;
            for (int i = 0; i < slots; i++) {
                address += deltas[i % 10];
                w0[i] = address;
                w1[i] = 0x401000;
            }
            byte[] packed = packAsTheRuntime(w0, w1, slots);
            long[] words = new long[2 * slots];
            PackedSlots.unpack(Arrays.copyOf(packed, packed.length + 7), packed.length, words, 2 * slots);
            for (int i = 0; i < slots; i++) assertThat(words[2 * i]).as("run %d slot %d", last, i).isEqualTo(w0[i]);
        }
    }

    /** rt_file.c's pack(): site as a zigzag varint difference shifted once, address as a zigzag varint delta. */
    private static byte[] packAsTheRuntime(long[] w0, long[] w1, int slots) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long[] table = new long[4096];
        long prevSite = 0;
        for (int i = 0; i < slots; ) {
            if (w1[i] < 0) {
                int n = 1 + (int) ((((w1[i] >>> 8) & 0xffff) + 15) / 16);
                out.write(1);
                ByteBuffer b = ByteBuffer.allocate(16 * n).order(ByteOrder.LITTLE_ENDIAN);
                for (int k = 0; k < n; k++) b.putLong(w0[i + k]).putLong(w1[i + k]);
                out.writeBytes(b.array());
                i += n;
                continue;
            }
            varint(out, zigzag(w1[i] - prevSite) << 1);
            prevSite = w1[i];
            int h = (int) ((w1[i] * 0x9E3779B97F4A7C15L) >>> 52);
            varint(out, zigzag(w0[i] - table[h]));
            table[h] = w0[i];
            i++;
        }
        return out.toByteArray();
    }

    private static long zigzag(long d) {
        return (d << 1) ^ (d >> 63);
    }

    private static void varint(ByteArrayOutputStream out, long v) {
        while (Long.compareUnsigned(v, 0x80) >= 0) {
            out.write((int) (v & 0x7f) | 0x80);
            v >>>= 7;
        }
        out.write((int) v);
    }
}
