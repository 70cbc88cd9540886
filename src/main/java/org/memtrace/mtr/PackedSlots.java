package org.memtrace.mtr;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Undoes codec 3's and codec 4's packing (docs/compiled-in.md, "Codecs"): the runtime writes each access record as two
 * varints (the site's difference to the previous record's site, the address's difference to the previous
 * address of a site hashed to the same table entry) and each tag as the byte 1 and its slots as they are,
 * so that zstd sees a few bytes per access instead of sixteen. Every chunk starts from zero and an empty
 * table, so chunks decode independently.
 */
final class PackedSlots {
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final int TABLE_BITS = 12;
    private static final long HASH = 0x9E3779B97F4A7C15L;

    private PackedSlots() {}

    /** Writes the slots {@code packed} stands for into {@code slots}, which they must fill exactly. */
    static void unpack(byte[] packed, MemorySegment slots) throws MtrFormatException {
        long[] table = new long[1 << TABLE_BITS];
        long site = 0, last = 0;
        int h = 0;
        long out = 0, size = slots.byteSize();
        int[] at = {0};
        while (at[0] < packed.length) {
            long token = varint(packed, at);
            if ((token & 1) != 0) {
                if (token != 1) throw new MtrFormatException("packed chunk: unknown token " + token);
                int start = at[0];
                if (packed.length - start < MtrFile.SLOT) throw new MtrFormatException("packed chunk: a tag cut short");
                long w1 = MemorySegment.ofArray(packed).get(U64, start + 8);
                long length = (w1 >>> 8) & 0xffff;
                long bytes = Math.min(MtrFile.SLOT * (1 + (length + MtrFile.SLOT - 1) / MtrFile.SLOT), packed.length - start);
                if (out + bytes > size) throw new MtrFormatException("packed chunk holds more than its raw length");
                MemorySegment.copy(MemorySegment.ofArray(packed), start, slots, out, bytes);
                out += bytes;
                at[0] += (int) bytes;
                continue;
            }
            long next = site + unzigzag(token >>> 1);
            if (next != site) {
                table[h] = last;
                site = next;
                h = (int) ((site * HASH) >>> (64 - TABLE_BITS));
                last = table[h];
            }
            last += unzigzag(varint(packed, at));
            if (out + MtrFile.SLOT > size) throw new MtrFormatException("packed chunk holds more than its raw length");
            slots.set(U64, out, last);
            slots.set(U64, out + 8, site);
            out += MtrFile.SLOT;
        }
        if (out != size) throw new MtrFormatException("packed chunk holds " + out + " bytes of slots, its header says " + size);
    }

    /**
     * Writes the slots codec 4's {@code packed} stands for into {@code slots}, which they must fill exactly.
     * A record is a token, the address difference (zigzag) times two plus a bit (65 bits, LEB128); with the bit
     * clear its site is the one that followed the last record of a site hashed to the previous record's
     * entry, with the bit set a varint follows: 0 for a tag (whose slots follow as they are), else the site's
     * difference to the previous record's site, zigzag, plus 1.
     */
    static void unpackPredicted(byte[] packed, MemorySegment slots) throws MtrFormatException {
        long[] table = new long[2 << TABLE_BITS]; // per entry: the last address of its sites, the site after its last one
        long site = 0, last = 0;
        int h = 0;
        long out = 0, size = slots.byteSize();
        int[] at = {0};
        MemorySegment bytes = MemorySegment.ofArray(packed);
        while (at[0] < packed.length) {
            int first = packed[at[0]++];
            long a = (first >>> 1) & 0x3f;
            if (first < 0) a |= varint(packed, at) << 6;
            long next;
            if ((first & 1) == 0) {
                next = table[2 * h + 1];
            } else {
                long v = varint(packed, at);
                if (v == 0) {
                    if (a != 0) throw new MtrFormatException("packed chunk: a tag token with an address");
                    int start = at[0];
                    if (packed.length - start < MtrFile.SLOT) throw new MtrFormatException("packed chunk: a tag cut short");
                    long w1 = bytes.get(U64, start + 8);
                    long length = (w1 >>> 8) & 0xffff;
                    long n = Math.min(MtrFile.SLOT * (1 + (length + MtrFile.SLOT - 1) / MtrFile.SLOT), packed.length - start);
                    if (out + n > size) throw new MtrFormatException("packed chunk holds more than its raw length");
                    MemorySegment.copy(bytes, start, slots, out, n);
                    out += n;
                    at[0] += (int) n;
                    continue;
                }
                next = site + unzigzag(v - 1);
            }
            table[2 * h + 1] = next;
            if (next != site) {
                table[2 * h] = last;
                site = next;
                h = (int) ((site * HASH) >>> (64 - TABLE_BITS));
                last = table[2 * h];
            }
            last += unzigzag(a);
            if (out + MtrFile.SLOT > size) throw new MtrFormatException("packed chunk holds more than its raw length");
            slots.set(U64, out, last);
            slots.set(U64, out + 8, site);
            out += MtrFile.SLOT;
        }
        if (out != size) throw new MtrFormatException("packed chunk holds " + out + " bytes of slots, its header says " + size);
    }

    private static long varint(byte[] b, int[] at) throws MtrFormatException {
        long v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (at[0] >= b.length) throw new MtrFormatException("packed chunk: a number cut short");
            int x = b[at[0]++];
            v |= (long) (x & 0x7f) << shift;
            if (x >= 0) return v;
        }
        throw new MtrFormatException("packed chunk: a number longer than 64 bits");
    }

    private static long unzigzag(long v) {
        return (v >>> 1) ^ -(v & 1);
    }
}
