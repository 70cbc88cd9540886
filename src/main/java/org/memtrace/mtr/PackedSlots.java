package org.memtrace.mtr;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Undoes codec 3's and codec 4's packing (docs/compiled-in.md, "Codecs"): the runtime writes each access record as two
 * varints (the site's difference to the previous record's site, the address's difference to the previous
 * address of a site hashed to the same table entry) and each tag as the byte 1 and its slots as they are,
 * so that zstd sees a few bytes per access instead of sixteen. Every chunk starts from zero and an empty
 * table, so chunks decode independently. Both decode straight into the reading thread's {@code long[]} of
 * slot words, which the reader then walks: no native buffer and no copy between.
 */
final class PackedSlots {
    private static final VarHandle LITTLE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    static final int TABLE_BITS = 12;
    /** Codec 5's: programs of many sites (sqlite3) collided in 4,096 entries, docs/compiled-in.md "Codecs". */
    static final int WIDE_TABLE_BITS = 16;
    static final long HASH = 0x9E3779B97F4A7C15L;

    private PackedSlots() {}

    /** Writes the slot words codec 3's {@code packed[0, length)} stands for into {@code words[0, count)}, which they must fill exactly. */
    static void unpack(byte[] packed, int length, long[] words, int count) throws MtrFormatException {
        long[] table = new long[1 << TABLE_BITS];
        long site = 0, last = 0;
        int h = 0;
        Cursor in = new Cursor(packed, length);
        Out out = new Out(words, count);
        while (in.at < length) {
            long token = in.varint();
            if ((token & 1) != 0) {
                if (token != 1) throw new MtrFormatException("packed chunk: unknown token " + token);
                in.at = out.tag(packed, in.at, length);
                continue;
            }
            long next = site + unzigzag(token >>> 1);
            if (next != site) {
                table[h] = last;
                site = next;
                h = (int) ((site * HASH) >>> (64 - TABLE_BITS));
                last = table[h];
            }
            last += unzigzag(in.varint());
            out.record(last, site);
        }
        out.finish();
    }

    /**
     * As {@link #unpack}, for codec 4 ({@code bits} {@link #TABLE_BITS}) and 5 ({@link #WIDE_TABLE_BITS}).
     * A record is a token, the address difference (zigzag) times two plus a bit (65 bits, LEB128); with the bit
     * clear its site is the one that followed the last record of a site hashed to the previous record's
     * entry, with the bit set a varint follows: 0 for a tag (whose slots follow as they are), else the site's
     * difference to the previous record's site, zigzag, plus 1.
     */
    static void unpackPredicted(byte[] packed, int length, long[] words, int count, int bits, Table reuse) throws MtrFormatException {
        long[] table = reuse.cleared(bits); // per entry: the last address of its sites, the site after its last one
        int[] touched = reuse.touched;
        int set = 0;
        long site = 0, last = 0;
        int h = 0;
        try {
            Cursor in = new Cursor(packed, length);
            Out out = new Out(words, count);
            while (in.at < length) {
                int first = packed[in.at++];
                long a = in.difference(first);
                long next;
                if ((first & 1) == 0) {
                    next = table[2 * h + 1];
                } else {
                    long v = in.varint();
                    if (v == 0) {
                        in.tag(a, out);
                        continue;
                    }
                    next = site + unzigzag(v - 1);
                }
                // an entry is listed when its successor is first set (a site, never 0): the next chunk clears those alone
                if (table[2 * h + 1] == 0 && set < touched.length) touched[set++] = h;
                table[2 * h + 1] = next;
                if (next != site) {
                    table[2 * h] = last;
                    site = next;
                    h = (int) ((site * HASH) >>> (64 - bits));
                    last = table[2 * h];
                }
                last += unzigzag(a);
                out.record(last, site);
            }
            out.finish();
        } finally { // a damaged chunk's entries are cleared too, before the next chunk
            reuse.set = set;
        }
    }

    /**
     * Codecs 4 and 5's table, kept by a reading thread from chunk to chunk: every chunk starts from a zeroed
     * one, and codec 5's is 1 MB, so a chunk clears only the entries the one before it set (sqlite3 uses
     * about 14,000 of its 65,536; gemm a handful) instead of allocating or clearing it whole.
     */
    static final class Table {
        private long[] entries = new long[0];
        private int width = 2;
        private final int[] touched = new int[1 << WIDE_TABLE_BITS];
        private int set;

        long[] cleared(int bits) {
            return cleared(bits, 2);
        }

        /** A zeroed table of {@code 1 << bits} entries of {@code words} longs each (2 for codecs 4 and 5, 4 for codec 6). */
        long[] cleared(int bits, int words) {
            if (entries.length < words << bits || words != width || set == touched.length) {
                // a first use, another width, or a damaged chunk that may have listed an entry twice: clear all
                if (entries.length < words << bits) entries = new long[words << bits];
                else java.util.Arrays.fill(entries, 0);
                width = words;
            } else {
                for (int i = 0; i < set; i++)
                    for (int k = 0; k < words; k++) entries[words * touched[i] + k] = 0;
            }
            set = 0;
            return entries;
        }

        int[] touched() {
            return touched;
        }

        private long[] differences = new long[0];

        /** Codec 8's per-slot differences, at least {@code n}, reused from chunk to chunk (any contents). */
        long[] differences(int n) {
            if (differences.length < n) differences = new long[n];
            return differences;
        }

        void set(int n) {
            set = n;
        }
    }

    /** Where the decoded slot words go, with the one check that keeps a damaged chunk inside its array. */
    static final class Out {
        private final long[] words;
        private final int count;
        private int at;

        Out(long[] words, int count) {
            this.words = words;
            this.count = count;
        }

        void record(long address, long site) throws MtrFormatException {
            if (at + 2 > count) throw new MtrFormatException("packed chunk holds more than its raw length");
            words[at] = address;
            words[at + 1] = site;
            at += 2;
        }

        /** Copies the tag at {@code start} and its event slots as they are (fewer if the chunk ends first); returns the position after them. */
        int tag(byte[] packed, int start, int end) throws MtrFormatException {
            if (end - start < MtrFile.SLOT) throw new MtrFormatException("packed chunk: a tag cut short");
            long w1 = (long) LITTLE.get(packed, start + 8);
            long length = (w1 >>> 8) & 0xffff;
            long bytes = Math.min(MtrFile.SLOT * (1 + (length + MtrFile.SLOT - 1) / MtrFile.SLOT), end - start);
            if (bytes % MtrFile.SLOT != 0) throw new MtrFormatException("packed chunk: a tag's record ends inside a slot");
            if (at + bytes / 8 > count) throw new MtrFormatException("packed chunk holds more than its raw length");
            for (int k = 0; k < bytes; k += 8) words[at++] = (long) LITTLE.get(packed, start + k);
            return start + (int) bytes;
        }

        void finish() throws MtrFormatException {
            if (at != count)
                throw new MtrFormatException("packed chunk holds " + 8L * at + " bytes of slots, its header says " + 8L * count);
        }
    }

    /**
     * The three streams of a codec 7, 8 or 9 payload, as fz_payload (agent/runtime/rt_fused.h) writes them:
     * the varints |c| and |t|, then the run stream c, the token stream t ({@code [tokens, tokensEnd)}) and the
     * value stream v (the rest).
     */
    record Streams(Cursor runs, int tokens, int tokensEnd, Cursor values) {
        static Streams of(byte[] packed, int length, String codec) throws MtrFormatException {
            Cursor head = new Cursor(packed, length);
            long nc = head.varint(), nt = head.varint();
            if (nc < 1 || nt < 0 || nc + nt > length - head.at)
                throw new MtrFormatException(codec + " chunk: streams of " + nc + " and " + nt + " bytes in a payload of " + length);
            int tAt = head.at + (int) nc, tEnd = tAt + (int) nt;
            Cursor c = new Cursor(packed, tAt);
            c.at = head.at;
            Cursor v = new Cursor(packed, length);
            v.at = tEnd;
            return new Streams(c, tAt, tEnd, v);
        }

        /** Refuses a chunk whose run or value stream was not read to its end. */
        void allRead(String codec) throws MtrFormatException {
            if (runs.at != runs.end || values.at != values.end)
                throw new MtrFormatException(codec + " chunk: " + (runs.end - runs.at) + " run bytes and " + (values.end - values.at) + " value bytes left over");
        }
    }

    /** The read position, a field rather than an array so that the JIT keeps it in a register. */
    static final class Cursor {
        final byte[] b;
        final int end;
        int at;

        Cursor(byte[] b, int end) {
            this.b = b;
            this.end = end;
        }

        /**
         * The difference a record token of codecs 4 to 6 carries, the token's first byte given: its bits 1 to 6,
         * then (with the top bit set) a varint of the higher ones.
         */
        long difference(int first) throws MtrFormatException {
            long a = (first >>> 1) & 0x3f;
            return first < 0 ? a | varint() << 6 : a;
        }

        /** Codec 9's short token's difference: two bytes, little-endian. */
        int u16() throws MtrFormatException {
            if (end - at < 2) throw new MtrFormatException("packed chunk: a short token cut short");
            int x = (b[at] & 0xff) | (b[at + 1] & 0xff) << 8;
            at += 2;
            return x;
        }

        /** A tag token of codecs 4 to 6 (whose difference must be 0): its tag and slots into {@code out}, read past. */
        void tag(long difference, Out out) throws MtrFormatException {
            if (difference != 0) throw new MtrFormatException("packed chunk: a tag token with an address");
            at = out.tag(b, at, end);
        }

        long varint() throws MtrFormatException {
            if (at < end && b[at] >= 0) return b[at++]; // most numbers of a packed chunk fit one byte
            if (at + 8 <= end) {
                // up to 8 bytes at once, without a branch per byte: random addresses make their lengths unpredictable
                long word = (long) LITTLE.get(b, at);
                long stops = ~word & 0x8080808080808080L;
                if (stops != 0) {
                    int bits = Long.numberOfTrailingZeros(stops) + 1; // through the last byte's top bit
                    long x = (bits == 64 ? word : word & ((1L << bits) - 1)) & 0x7f7f7f7f7f7f7f7fL;
                    x = (x & 0x007f007f007f007fL) | (x & 0x7f007f007f007f00L) >>> 1;
                    x = (x & 0x00003fff00003fffL) | (x & 0x3fff00003fff0000L) >>> 2;
                    x = (x & 0x000000000fffffffL) | (x & 0x0fffffff00000000L) >>> 4;
                    at += bits >>> 3;
                    return x;
                }
            }
            long v = 0;
            for (int shift = 0; shift < 64; shift += 7) {
                if (at >= end) throw new MtrFormatException("packed chunk: a number cut short");
                int x = b[at++];
                v |= (long) (x & 0x7f) << shift;
                if (x >= 0) return v;
            }
            throw new MtrFormatException("packed chunk: a number longer than 64 bits");
        }
    }

    static long unzigzag(long v) {
        return (v >>> 1) ^ -(v & 1);
    }
}
