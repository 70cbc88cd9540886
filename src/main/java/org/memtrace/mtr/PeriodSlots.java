package org.memtrace.mtr;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Undoes codec 8's packing (docs/trace-format.md, "Codec 8"): the runtime's period encoder
 * (agent/runtime/rt_period.c) predicts each access record from the slot k back in the chunk, its site that
 * slot's and its address that slot's plus that slot's difference. Records that meet the prediction are only
 * counted (a run, one varint in the run stream); the others are tokens that name their site by the slot k
 * back (P), a slot j back (J, which makes j the period) or a difference to the slot before (F, its address
 * against a table of far addresses), with the address's difference in the value stream. The decoded words
 * are the history: slots before the chunk's start read as zeros.
 */
final class PeriodSlots {
    private static final VarHandle LITTLE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    /** rt_period.h's PERIOD_W: how far back a J token may name its site. */
    static final int WINDOW = 64;
    static final int P = 0, J = 1, F = 2, TAG = 3;

    private PeriodSlots() {}

    /**
     * Writes the slot words codec 8's {@code packed[0, length)} stands for into {@code words[0, count)}. The
     * payload is the varints |c| and |t|, then the run stream c, the token stream t and the value stream v.
     */
    static void unpack(byte[] packed, int length, long[] words, int count, PackedSlots.Table reuse) throws MtrFormatException {
        PackedSlots.Streams streams = PackedSlots.Streams.of(packed, length, "codec 8");
        PackedSlots.Cursor c = streams.runs(), v = streams.values();
        int tAt = streams.tokens(), tEnd = streams.tokensEnd();
        long[] table = reuse.cleared(FusedSlots.BITS, 1); // per entry: the last address of a far token's site
        int[] touched = reuse.touched();
        int set = 0;
        long[] dd = reuse.differences(count / 2 + 1); // per slot: the difference the predictor keeps for it
        int at = 0, k = 1; // words written; the period
        try {
            for (;;) {
                for (long run = c.varint(); run > 0; run--) {
                    int r = at - 2 * k;
                    if (r < 0 || words[r + 1] == 0 || words[r + 1] < 0)
                        throw new MtrFormatException("codec 8 chunk: a predicted record with no site " + k + " slots back");
                    if (at + 2 > count) throw new MtrFormatException("codec 8 chunk holds more than its raw length");
                    long d = dd[r / 2];
                    words[at] = words[r] + d;
                    words[at + 1] = words[r + 1];
                    dd[at / 2] = d;
                    at += 2;
                }
                if (tAt == tEnd) break;
                int b = packed[tAt++] & 0xff, kind = b & 3, g = (b >>> 2) & 3, len = (b >>> 4) & 3;
                if (kind == TAG) {
                    if (b != TAG) throw new MtrFormatException("codec 8 chunk: a tag token with bits " + b);
                    at = tag(packed, v, words, at, count, dd);
                    continue;
                }
                if (b >>> 6 != 0) throw new MtrFormatException("codec 8 chunk: a token with bits " + b);
                if (at + 2 > count) throw new MtrFormatException("codec 8 chunk holds more than its raw length");
                long site, base;
                if (kind == P) {
                    site = word(words, at - 2 * k + 1);
                    base = word(words, at - 2 * k);
                } else if (kind == J) {
                    if (v.at >= v.end) throw new MtrFormatException("codec 8 chunk: a number cut short");
                    int j = packed[v.at++] & 0xff;
                    if (j < 1 || j > WINDOW) throw new MtrFormatException("codec 8 chunk: a site " + j + " slots back");
                    k = j;
                    site = word(words, at - 2 * j + 1);
                    base = word(words, at - 2 * j);
                } else {
                    site = word(words, at - 1) + PackedSlots.unzigzag(v.varint());
                    int h = FusedSlots.entry(site);
                    if (table[h] == 0 && set < touched.length) touched[set++] = h;
                    base = table[h];
                }
                if (site == 0 || site < 0) throw new MtrFormatException("codec 8 chunk: a record whose site is " + Long.toHexString(site));
                long a = switch (len) {
                    case 0 -> 0;
                    case 1 -> byteAt(packed, v);
                    case 2 -> byteAt(packed, v) | byteAt(packed, v) << 8;
                    default -> v.varint();
                };
                long d = PackedSlots.unzigzag(a) << g;
                words[at] = base + d;
                words[at + 1] = site;
                if (kind == F) table[FusedSlots.entry(site)] = base + d;
                dd[at / 2] = d;
                at += 2;
            }
            streams.allRead("codec 8");
            if (at != count)
                throw new MtrFormatException("codec 8 chunk holds " + 8L * at + " bytes of slots, its header says " + 8L * count);
        } finally { // a damaged chunk's entries are cleared too, before the next chunk
            reuse.set(set);
        }
    }

    /** Word i of the decoded slots; before the chunk's start, 0. */
    private static long word(long[] words, int i) {
        return i < 0 ? 0 : words[i];
    }

    private static long byteAt(byte[] packed, PackedSlots.Cursor v) throws MtrFormatException {
        if (v.at >= v.end) throw new MtrFormatException("codec 8 chunk: a number cut short");
        return packed[v.at++] & 0xffL;
    }

    /** A tag and its event slots from v as they are (fewer if v ends first); their differences are 0. Returns the words written. */
    private static int tag(byte[] packed, PackedSlots.Cursor v, long[] words, int at, int count, long[] dd) throws MtrFormatException {
        if (v.end - v.at < MtrFile.SLOT) throw new MtrFormatException("codec 8 chunk: a tag cut short");
        long w1 = (long) LITTLE.get(packed, v.at + 8);
        if (w1 >= 0) throw new MtrFormatException("codec 8 chunk: a tag token without a tag");
        long length = (w1 >>> 8) & 0xffff;
        long bytes = Math.min(MtrFile.SLOT * (1 + (length + MtrFile.SLOT - 1) / MtrFile.SLOT), v.end - v.at);
        if (bytes % MtrFile.SLOT != 0) throw new MtrFormatException("codec 8 chunk: a tag's record ends inside a slot");
        if (at + bytes / 8 > count) throw new MtrFormatException("codec 8 chunk holds more than its raw length");
        for (int k = 0; k < bytes; k += 8) {
            if ((at & 1) == 0) dd[at / 2] = 0;
            words[at++] = (long) LITTLE.get(packed, v.at + k);
        }
        v.at += (int) bytes;
        return at;
    }
}
