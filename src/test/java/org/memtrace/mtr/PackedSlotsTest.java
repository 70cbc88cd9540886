package org.memtrace.mtr;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Codecs 3's and 5's packing, encoded here as the runtime does it (rt_codec.c, pack_slots), comes back exactly. */
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

    /**
     * Codec 5's chunks through one reused table, as a reading thread decodes them: each comes back exactly
     * whatever chunk came before it (a chunk clears only the entries the one before it set), a damaged
     * one included.
     */
    @Test
    void predictedChunksDecodeAlikeThroughAReusedTable() throws Exception {
        Random random = new Random(11);
        int n = 20_000;
        long[][] w0 = new long[3][n], w1 = new long[3][n];
        for (int c = 0; c < 3; c++) {
            // chunk 0: 3,000 sites (thousands of entries set), chunks 1 and 2: a few, some of chunk 0's
            long[] sites = new long[c == 0 ? 3000 : 5];
            for (int k = 0; k < sites.length; k++) sites[k] = 0x401000 + 16L * random.nextInt(1 << 20);
            if (c > 0) sites[0] = w1[0][0];
            for (int i = 0; i < n; i++) {
                w1[c][i] = sites[random.nextInt(sites.length)];
                w0[c][i] = i % 7 == 0 ? random.nextLong() : 0x7f0000000000L + 8L * i * (c + 1);
            }
        }
        byte[][] packed = new byte[3][];
        for (int c = 0; c < 3; c++) packed[c] = packPredicted(w0[c], w1[c], n, PackedSlots.WIDE_TABLE_BITS);
        PackedSlots.Table table = new PackedSlots.Table();
        long[] words = new long[2 * n];
        int[] order = {0, 1, 0, 2, 1, 2};
        for (int c : order) {
            PackedSlots.unpackPredicted(packed[c], packed[c].length, words, 2 * n, PackedSlots.WIDE_TABLE_BITS, table);
            for (int i = 0; i < n; i++) {
                assertThat(words[2 * i]).as("chunk %d slot %d", c, i).isEqualTo(w0[c][i]);
                assertThat(words[2 * i + 1]).as("chunk %d slot %d", c, i).isEqualTo(w1[c][i]);
            }
            // chunk 0 cut short: an error, and the next chunk still decodes from a zeroed table
            if (c == 0) assertThatThrownBy(() -> PackedSlots.unpackPredicted(packed[0], packed[0].length / 2, words, 2 * n,
                    PackedSlots.WIDE_TABLE_BITS, table)).isInstanceOf(MtrFormatException.class);
        }
    }

    /** rt_codec.c's pack_slots() with predict (codecs 4 and 5), records only: a token per record, then the site's step when mispredicted. */
    private static byte[] packPredicted(long[] w0, long[] w1, int slots, int bits) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long[] t = new long[2 << bits];
        long site = 0, last = 0;
        int h = 0;
        for (int i = 0; i < slots; i++) {
            long step = w1[i] - site, predicted = t[2 * h + 1];
            t[2 * h + 1] = w1[i];
            if (w1[i] != site) {
                t[2 * h] = last;
                site = w1[i];
                h = (int) ((site * 0x9E3779B97F4A7C15L) >>> (64 - bits));
                last = t[2 * h];
            }
            long a = zigzag(w0[i] - last);
            last = w0[i];
            int bit = w1[i] == predicted ? 0 : 1;
            int first = (int) ((a & 0x3f) << 1) | bit;
            if (Long.compareUnsigned(a, 0x40) < 0) {
                out.write(first);
            } else {
                out.write(first | 0x80);
                varint(out, a >>> 6);
            }
            if (bit == 1) varint(out, zigzag(step) + 1);
        }
        return out.toByteArray();
    }

    /** rt_codec.c's pack(): site as a zigzag varint difference shifted once, address as a zigzag varint delta. */
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
