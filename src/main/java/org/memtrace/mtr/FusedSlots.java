package org.memtrace.mtr;

/**
 * Undoes codec 7's packing (docs/trace-format.md, "Codec 7"): the runtime's fused encoder
 * (agent/runtime/rt_fused.c) predicts each access record from the table entry of its site, its site the one
 * that followed the entry's last time and its address the entry's last plus the entry's stride (its last
 * difference). Records that meet both predictions are only counted, a run of them one varint in the run stream
 * before the next token; every other record is a codec 6 token whose first byte is in the token stream and
 * whose further bytes are in the value stream. Both halves keep the same table the same way, so a hit needs
 * nothing stored. Each side lists the entries it sets on its own; only the table's contents must agree.
 * Codec 9 is codec 7 with one more token, the short token: each varint of the run stream is the run times 2,
 * plus 1 when a short token follows it, a record at the predicted site whose difference (granule-scaled,
 * zigzag) is the next two bytes of the value stream, little-endian; no token byte.
 */
final class FusedSlots {
    /** The granule of an entry no record of the chunk has set: rt_fused.h's FUSED_G0. */
    static final int G0 = 6;
    /** rt_fused.h's FUSED_BITS; the entry of a site is {@link #entry}, as rt_fused.h's fused_entry computes it. */
    static final int BITS = 16;

    private FusedSlots() {}

    static int entry(long site) {
        return (int) ((site * PackedSlots.HASH) >>> (64 - BITS));
    }

    /**
     * Writes the slot words codec 7's {@code packed[0, length)} stands for into {@code words[0, count)}. The
     * payload is the varints |c| and |t|, then the run stream c (a varint per token and one at the end), the
     * token stream t (a byte per token) and the value stream v (the rest). Per entry the table holds: the last
     * address of its sites, the site after its last one, its granule plus 1 (0: G0), its stride. With
     * {@code shorts}, codec 9's: a run's low bit says a short token follows it (the class comment).
     */
    static void unpack(byte[] packed, int length, long[] words, int count, PackedSlots.Table reuse, boolean shorts) throws MtrFormatException {
        String codec = shorts ? "codec 9" : "codec 7";
        PackedSlots.Streams streams = PackedSlots.Streams.of(packed, length, codec);
        PackedSlots.Cursor c = streams.runs(), v = streams.values();
        int tAt = streams.tokens(), tEnd = streams.tokensEnd();
        long[] table = reuse.cleared(BITS, 4);
        int[] touched = reuse.touched();
        int set = 0;
        long site = 0, last = 0, stride = 0, gw = 0;
        int h = 0;
        try {
            PackedSlots.Out out = new PackedSlots.Out(words, count);
            for (;;) {
                long r = c.varint();
                boolean isShort = shorts && (r & 1) != 0;
                for (long run = shorts ? r >>> 1 : r; run > 0; run--) {
                    long next = table[4 * h + 1];
                    if (next != site) {
                        table[4 * h] = last;
                        site = next;
                        h = entry(site);
                        last = table[4 * h];
                        gw = table[4 * h + 2];
                        stride = table[4 * h + 3];
                    }
                    last += stride;
                    out.record(last, site);
                }
                long a, next;
                boolean regrain = false;
                int first = 0;
                if (isShort) {
                    a = v.u16();
                } else {
                    if (tAt == tEnd) break;
                    first = packed[tAt++];
                    a = v.difference(first);
                }
                if ((first & 1) == 0) {
                    next = table[4 * h + 1];
                } else {
                    long x = v.varint();
                    if (x == 0) {
                        v.tag(a, out);
                        continue;
                    }
                    if (x == 1) {
                        regrain = true;
                        x = v.varint();
                        if (x == 0) throw new MtrFormatException(codec + " chunk: a re-grained record without its site");
                    } else {
                        x--;
                    }
                    next = site + PackedSlots.unzigzag(x - 1);
                    if (table[4 * h + 1] == 0 && set < touched.length) touched[set++] = h;
                    table[4 * h + 1] = next;
                }
                if (next != site) {
                    table[4 * h] = last;
                    site = next;
                    h = entry(site);
                    last = table[4 * h];
                    gw = table[4 * h + 2];
                    stride = table[4 * h + 3];
                }
                long d = PackedSlots.unzigzag(a);
                int g = gw == 0 ? G0 : (int) (gw - 1);
                if (regrain) {
                    if (d == 0 || Long.numberOfTrailingZeros(d) >= g)
                        throw new MtrFormatException(codec + " chunk: a re-grained record whose difference fits its granule");
                    gw = Long.numberOfTrailingZeros(d) + 1;
                    table[4 * h + 2] = gw;
                } else {
                    d <<= g;
                }
                if (table[4 * h + 1] == 0 && set < touched.length) touched[set++] = h;
                stride = d;
                table[4 * h + 3] = d;
                last += d;
                out.record(last, site);
            }
            streams.allRead(codec);
            out.finish();
        } finally { // a damaged chunk's entries are cleared too, before the next chunk
            reuse.set(set);
        }
    }
}
