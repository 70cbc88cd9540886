package org.memtrace.mtr;

/**
 * Undoes codec 6's packing (docs/compiled-in.md, "Codecs"): codec 5 with each table entry's granule, the
 * trailing zero bits its sites' address differences share, taken out of every difference. An array of doubles
 * read at random indices ({@code base + 8 × index}) then costs the index's difference, not eight times it.
 * The runtime's {@code pack_scaled} (agent/runtime/rt_codec.c) is the other half; both keep the granule the
 * same way, so nothing of it is stored but the rare record that changes it.
 */
final class ScaledSlots {
    /** The granule of an entry no record has set in the chunk. */
    static final int G0 = 6;
    private static final int BITS = PackedSlots.WIDE_TABLE_BITS;

    private ScaledSlots() {}

    /**
     * Writes the slot words codec 6's {@code packed[0, length)} stands for into {@code words[0, count)}. A record
     * is a token, a difference (zigzag) times two plus a bit (65 bits, LEB128). With the bit clear, its site is
     * the one that followed the last record of a site hashed to the previous record's entry and the difference is
     * in granules of the site's entry. With the bit set a varint v follows: 0 for a tag (whose slots follow as
     * they are); 1 for a record that re-grains its entry (a varint follows, the site's difference to the previous
     * record's site, zigzag, plus 1; the difference is in bytes, and its trailing zero count becomes the
     * granule); else the site's difference, zigzag, plus 2, the difference in granules.
     */
    static void unpack(byte[] packed, int length, long[] words, int count, PackedSlots.Table reuse) throws MtrFormatException {
        long[] table = reuse.cleared(BITS, 4); // per entry: last address, site after its last one, granule + 1
        int[] touched = reuse.touched();
        int set = 0;
        long site = 0, last = 0;
        int h = 0, g = G0;
        try {
            PackedSlots.Cursor in = new PackedSlots.Cursor(packed, length);
            PackedSlots.Out out = new PackedSlots.Out(words, count);
            while (in.at < length) {
                int first = packed[in.at++];
                long a = in.difference(first);
                long next;
                boolean regrain = false;
                if ((first & 1) == 0) {
                    next = table[4 * h + 1];
                } else {
                    long v = in.varint();
                    if (v == 0) {
                        in.tag(a, out);
                        continue;
                    }
                    if (v == 1) {
                        regrain = true;
                        v = in.varint();
                        if (v == 0) throw new MtrFormatException("packed chunk: a re-grained record without its site");
                    } else {
                        v--;
                    }
                    next = site + PackedSlots.unzigzag(v - 1);
                }
                // an entry is listed when its successor is first set (a site, never 0): the next chunk clears those alone
                if (table[4 * h + 1] == 0 && set < touched.length) touched[set++] = h;
                table[4 * h + 1] = next;
                if (next != site) {
                    table[4 * h] = last;
                    table[4 * h + 2] = g + 1;
                    site = next;
                    h = (int) ((site * PackedSlots.HASH) >>> (64 - BITS));
                    last = table[4 * h];
                    long stored = table[4 * h + 2];
                    g = stored == 0 ? G0 : (int) (stored - 1);
                }
                long d = PackedSlots.unzigzag(a);
                if (regrain) {
                    if (d == 0 || Long.numberOfTrailingZeros(d) >= g)
                        throw new MtrFormatException("packed chunk: a re-grained record whose difference fits its granule");
                    g = Long.numberOfTrailingZeros(d);
                } else {
                    d <<= g;
                }
                last += d;
                out.record(last, site);
            }
            out.finish();
        } finally { // a damaged chunk's entries are cleared too, before the next chunk
            reuse.set(set);
        }
    }
}
