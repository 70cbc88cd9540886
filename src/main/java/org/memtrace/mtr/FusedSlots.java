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
 * zigzag) is the next two bytes of the value stream, little-endian; no token byte. Codec 10 is codec 9 whose
 * entries also keep their other follower (the one before the last): each run is times 4, plus 1 for a short
 * token, plus 2 for a hit at the other follower (a loop's exit and its way back in, spmv's row ends), which then
 * swaps the two; every record whose site is not the entry's follower makes the follower the other one.
 * Codec 11 is codec 10 with index edges: a follower word {@code ~site} (negative: no site has the top bit)
 * says that a hit along it is an index record, the next two bytes of v its granule-scaled difference as a
 * signed 16-bit number (a random index in a run of hits, spmv's {@code p[colidx[k]]}); one whose difference is
 * its entry's stride again makes the follower {@code site}. A short token (kind 1) after a run under 8 makes the
 * follower of the entry before it {@code ~site}; a token at the predicted site of an index edge makes it plain.
 */
final class FusedSlots {
    /** The granule of an entry no record of the chunk has set: rt_fused.h's FUSED_G0. */
    static final int G0 = 6;
    /** rt_fused.h's FUSED_BITS; the entry of a site is {@link #entry}, as rt_fused.h's fused_entry computes it. */
    static final int BITS = 16;

    private FusedSlots() {}

    /** The run stream's low bits that say what follows a run: rt_fused.h's fused_shift. */
    static int shift(int codec) {
        return codec == MtrFile.CODEC_ZSTD_FUSED_OTHER || codec == MtrFile.CODEC_ZSTD_FUSED_INDEX ? 2
                : codec == MtrFile.CODEC_ZSTD_FUSED_SHORT ? 1 : 0;
    }

    static int entry(long site) {
        return (int) ((site * PackedSlots.HASH) >>> (64 - BITS));
    }

    /**
     * Writes the slot words codec 7's {@code packed[0, length)} stands for into {@code words[0, count)}. The
     * payload is the varints |c| and |t|, then the run stream c (a varint per token and one at the end), the
     * token stream t (a byte per token) and the value stream v (the rest). Per entry the table holds: the last
     * address of its sites, the site after its last one, its granule plus 1 (0: G0), its stride. With
     * {@code shift} 1, codec 9's: a run's low bit says a short token follows it; 2, codec 10's: its low two bits
     * say a short token or a hit at the other follower, kept as a fifth word per entry (the class comment);
     * {@code index}, codec 11's: index edges (the class comment).
     */
    static void unpack(byte[] packed, int length, long[] words, int count, PackedSlots.Table reuse, int shift, boolean index)
            throws MtrFormatException {
        String codec = "codec " + (index ? 11 : shift == 2 ? 10 : shift == 1 ? 9 : 7);
        PackedSlots.Streams streams = PackedSlots.Streams.of(packed, length, codec);
        PackedSlots.Cursor c = streams.runs(), v = streams.values();
        int tAt = streams.tokens(), tEnd = streams.tokensEnd();
        long[] table = reuse.cleared(BITS, 5); // 4 words (codec 7's), then the other follower (codec 10's)
        int[] touched = reuse.touched();
        int set = 0;
        long site = 0, last = 0, stride = 0, gw = 0;
        int h = 0;
        try {
            PackedSlots.Out out = new PackedSlots.Out(words, count);
            for (;;) {
                long r = c.varint();
                int kind = (int) (r & ((1 << shift) - 1));
                for (long run = r >>> shift; run > 0; run--) {
                    long next = table[5 * h + 1];
                    if (next < 0 && index) { // an index record: two bytes of v, signed, times the granule
                        int from = h;
                        table[5 * h] = last;
                        site = ~next;
                        h = entry(site);
                        last = table[5 * h];
                        gw = table[5 * h + 2];
                        long d = (long) (short) v.u16() << (gw == 0 ? G0 : (int) (gw - 1));
                        if (d == table[5 * h + 3]) table[5 * from + 1] = site; // the stride again: a plain edge
                        if (table[5 * h + 1] == 0 && set < touched.length) touched[set++] = h;
                        stride = d;
                        table[5 * h + 3] = d;
                        last += d;
                        out.record(last, site);
                        continue;
                    }
                    if (next != site) {
                        table[5 * h] = last;
                        site = next;
                        h = entry(site);
                        last = table[5 * h];
                        gw = table[5 * h + 2];
                        stride = table[5 * h + 3];
                    }
                    last += stride;
                    out.record(last, site);
                }
                if (kind == 3) throw new MtrFormatException(codec + " chunk: a run of kind 3");
                if (kind == 2) { // the other follower at its stride; it and the follower swap
                    long next = table[5 * h + 4], was = table[5 * h + 1];
                    if (next < 0) throw new MtrFormatException(codec + " chunk: a hit at an index edge's other follower");
                    if (was == 0 && set < touched.length) touched[set++] = h;
                    table[5 * h + 1] = next;
                    table[5 * h + 4] = was;
                    if (next != site) {
                        table[5 * h] = last;
                        site = next;
                        h = entry(site);
                        last = table[5 * h];
                        gw = table[5 * h + 2];
                        stride = table[5 * h + 3];
                    }
                    last += stride;
                    out.record(last, site);
                    continue;
                }
                boolean isShort = kind == 1;
                long a, next;
                boolean regrain = false;
                int first = 0;
                if (isShort) {
                    a = v.u16();
                    if (table[5 * h + 1] < 0) throw new MtrFormatException(codec + " chunk: a short token along an index edge");
                } else {
                    if (tAt == tEnd) break;
                    first = packed[tAt++];
                    a = v.difference(first);
                }
                if ((first & 1) == 0) {
                    next = table[5 * h + 1];
                    if (next < 0) { // codec 11: a token at an index edge's site makes the edge plain
                        next = ~next;
                        table[5 * h + 1] = next;
                    } else if (isShort && index && (r >>> shift) < 8) { // codec 11: after a short run, an index edge
                        table[5 * h + 1] = ~next;
                    }
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
                    if (table[5 * h + 1] == 0 && set < touched.length) touched[set++] = h;
                    // codec 10's other follower (unread by 7 and 9): a re-grained hit names the follower itself,
                    // a re-grained record at a codec 11 index edge its site
                    if (table[5 * h + 1] != next && table[5 * h + 1] != ~next) table[5 * h + 4] = table[5 * h + 1];
                    table[5 * h + 1] = next;
                }
                if (next != site) {
                    table[5 * h] = last;
                    site = next;
                    h = entry(site);
                    last = table[5 * h];
                    gw = table[5 * h + 2];
                    stride = table[5 * h + 3];
                }
                long d = PackedSlots.unzigzag(a);
                int g = gw == 0 ? G0 : (int) (gw - 1);
                if (regrain) {
                    if (d == 0 || Long.numberOfTrailingZeros(d) >= g)
                        throw new MtrFormatException(codec + " chunk: a re-grained record whose difference fits its granule");
                    gw = Long.numberOfTrailingZeros(d) + 1;
                    table[5 * h + 2] = gw;
                } else {
                    d <<= g;
                }
                if (table[5 * h + 1] == 0 && set < touched.length) touched[set++] = h;
                stride = d;
                table[5 * h + 3] = d;
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
