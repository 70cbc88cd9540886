package org.memtrace.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.memtrace.event.Event;
import org.memtrace.event.EventDecoder;

/**
 * A .mtr file read back for the runtime's tests, straight from docs/compiled-in.md and independent of
 * memtrace's own reader: every layout rule of the contract is asserted while reading. Payloads are
 * decompressed by the zstd command (all frames of a file in one run), codec 2's address deltas undone.
 */
record MtrTestFile(long pid, long pageSize, List<Chunk> chunks, End end) {

    sealed interface Slot permits Access, Tagged {}

    record Access(long address, long site) implements Slot {}

    record Tagged(long sequence, Event event) implements Slot {}

    record Chunk(int tid, long order, int codec, List<Slot> slots) {}

    record End(long chunks, long records, long dropped) {}

    private static final int TABLE_BITS = 12;

    static MtrTestFile read(Path file) throws IOException, InterruptedException {
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(b.remaining()).as("header").isGreaterThanOrEqualTo(64);
        byte[] magic = new byte[8];
        b.get(magic);
        assertThat(new String(magic, java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("MTRFILE1");
        assertThat(b.getInt()).as("version").isEqualTo(2);
        assertThat(b.getInt()).as("header_size").isEqualTo(64);
        long pid = b.getLong(), page = b.getLong();
        for (int i = 0; i < 28; i++) assertThat(b.get()).as("reserved header byte").isZero();
        assertThat(b.getInt()).as("header checksum").isEqualTo(crc(b, 0, 60));

        record Raw(int tid, long order, int rawLen, int codec, byte[] payload) {}
        List<Raw> raws = new ArrayList<>();
        End end = null;
        while (b.remaining() >= 4) {
            int m = b.getInt(b.position());
            if (m == 0x444e4545) {
                assertThat(b.remaining()).as("end record").isEqualTo(32);
                b.getInt();
                assertThat(b.getInt()).as("end record checksum").isEqualTo(crc(b, b.position(), 24));
                end = new End(b.getLong(), b.getLong(), b.getLong());
                break;
            }
            if (b.remaining() < 40) break; // a chunk header cut by SIGKILL
            assertThat(m).as("chunk magic at %d", b.position()).isEqualTo(0x4b4e4843);
            int headerCrc = crc(b, b.position(), 32);
            b.getInt();
            int tid = b.getInt();
            long order = b.getLong();
            int stored = b.getInt(), rawLen = b.getInt(), codec = b.getInt();
            int payloadCrc = b.getInt();
            assertThat(b.getInt()).as("chunk header checksum").isEqualTo(headerCrc);
            assertThat(b.getInt()).as("chunk reserved").isZero();
            assertThat(codec).isIn(0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11);
            if (b.remaining() < stored) break; // a payload cut by SIGKILL
            assertThat(payloadCrc).as("payload checksum").isEqualTo(crc(b, b.position(), stored));
            byte[] payload = new byte[stored];
            b.get(payload);
            int pad = (8 - stored % 8) % 8;
            if (b.remaining() < pad) break;
            for (int i = 0; i < pad; i++) assertThat(b.get()).as("chunk padding").isZero();
            assertThat(rawLen % 16).as("raw_len is whole slots").isZero();
            raws.add(new Raw(tid, order, rawLen, codec, payload));
        }
        byte[] inflated = unzstd(raws.stream().filter(r -> r.codec != 0).map(Raw::payload).toList());
        int at = 0;
        List<Chunk> chunks = new ArrayList<>();
        for (Raw r : raws) {
            byte[] raw;
            if (r.codec == 0) {
                raw = r.payload;
            } else {
                int content = r.codec >= 3 ? frameContentSize(r.payload) : r.rawLen;
                raw = java.util.Arrays.copyOfRange(inflated, at, at + content);
                at += content;
                if (r.codec == 3) raw = unpack(raw);
                if (r.codec == 4 || r.codec == 5) raw = unpackPredicted(raw, r.codec == 4 ? TABLE_BITS : 16);
                if (r.codec == 6) raw = unpackScaled(raw);
                if (r.codec == 7 || r.codec >= 9 && r.codec <= 11) raw = unpackFused(raw, r.codec);
            }
            assertThat(raw.length).as("raw_len of chunk %d", r.order).isEqualTo(r.rawLen);
            chunks.add(new Chunk(r.tid, r.order, r.codec, slots(raw, r.codec == 2)));
        }
        assertThat(at).as("decompressed bytes").isEqualTo(inflated.length);
        for (int i = 0; i < chunks.size(); i++) assertThat(chunks.get(i).order()).as("chunk order").isEqualTo(i);
        return new MtrTestFile(pid, page, List.copyOf(chunks), end);
    }

    /** CRC32C of {@code length} bytes of the file from {@code offset}, as docs/compiled-in.md ("Checksums") defines them. */
    private static int crc(ByteBuffer file, int offset, int length) {
        java.util.zip.CRC32C c = new java.util.zip.CRC32C();
        c.update(file.array(), offset, length);
        return (int) c.getValue();
    }

    private static List<Slot> slots(byte[] raw, boolean delta) {
        ByteBuffer s = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
        long[] table = new long[1 << TABLE_BITS];
        List<Slot> out = new ArrayList<>();
        MemorySegment seg = MemorySegment.ofArray(raw);
        while (s.remaining() > 0) {
            long w0 = s.getLong(), w1 = s.getLong();
            if (w1 < 0) {
                assertThat(w1 & 0xff).as("tag type").isEqualTo(1);
                int len = (int) ((w1 >>> 8) & 0xffff);
                assertThat(w1 >>> 24 & 0x7fffffffffL).as("tag's unused bits").isZero();
                int off = s.position();
                assertThat(EventDecoder.size(seg, off)).as("event size vs tag length").isEqualTo(len);
                out.add(new Tagged(w0, EventDecoder.decode(seg, off, off)));
                int padded = (len + 15) / 16 * 16;
                for (int i = len; i < padded; i++) assertThat(raw[off + i]).as("event padding").isZero();
                s.position(off + padded);
                continue;
            }
            if (delta) {
                int h = (int) ((w1 * 0x9E3779B97F4A7C15L) >>> (64 - TABLE_BITS));
                w0 += table[h];
                table[h] = w0;
            }
            out.add(new Access(w0, w1));
        }
        return out;
    }

    /** A zstd frame header's content size (RFC 8878, 3.1.1.1): the runtime always states it. */
    private static int frameContentSize(byte[] frame) {
        int descriptor = frame[4] & 0xff;
        int fcsFlag = descriptor >>> 6;
        boolean single = (descriptor & 0x20) != 0;
        int at = 5 + (single ? 0 : 1) + new int[] {0, 1, 2, 4}[descriptor & 3];
        int bytes = fcsFlag == 0 ? (single ? 1 : 0) : 1 << fcsFlag;
        assertThat(bytes).as("frame states its content size").isPositive();
        long v = 0;
        for (int i = 0; i < bytes; i++) v |= (long) (frame[at + i] & 0xff) << (8 * i);
        return (int) (bytes == 2 ? v + 256 : v);
    }

    /** Codec 3 back into slots, written here from docs/compiled-in.md independently of the reader's PackedSlots. */
    private static byte[] unpack(byte[] packed) {
        ByteBuffer in = ByteBuffer.wrap(packed).order(ByteOrder.LITTLE_ENDIAN);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteBuffer slot = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        long[] table = new long[1 << TABLE_BITS];
        long site = 0;
        while (in.hasRemaining()) {
            long token = varint(in);
            if (token == 1) {
                long w1 = in.getLong(in.position() + 8);
                int n = (int) Math.min(16 * (1 + (((w1 >>> 8) & 0xffff) + 15) / 16), in.remaining());
                out.write(packed, in.position(), n);
                in.position(in.position() + n);
                continue;
            }
            assertThat(token & 1).as("access token").isZero();
            site += unzigzag(token >>> 1);
            int h = (int) ((site * 0x9E3779B97F4A7C15L) >>> (64 - TABLE_BITS));
            table[h] += unzigzag(varint(in));
            slot.clear();
            slot.putLong(table[h]).putLong(site);
            out.write(slot.array(), 0, 16);
        }
        return out.toByteArray();
    }

    /** Codecs 4 and 5 back into slots, from docs/compiled-in.md independently of the reader's PackedSlots. */
    private static byte[] unpackPredicted(byte[] packed, int bits) {
        ByteBuffer in = ByteBuffer.wrap(packed).order(ByteOrder.LITTLE_ENDIAN);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteBuffer slot = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        long[] address = new long[1 << bits];
        long[] follower = new long[1 << bits];
        long site = 0;
        int previous = 0;
        while (in.hasRemaining()) {
            int first = in.get() & 0xff;
            long delta = (first >>> 1) & 0x3f;
            if (first >= 0x80) delta |= varint(in) << 6;
            long next = follower[previous];
            if ((first & 1) != 0) {
                long v = varint(in);
                if (v == 0) {
                    assertThat(delta).as("a tag token carries no address").isZero();
                    long w1 = in.getLong(in.position() + 8);
                    int n = (int) Math.min(16 * (1 + (((w1 >>> 8) & 0xffff) + 15) / 16), in.remaining());
                    out.write(packed, in.position(), n);
                    in.position(in.position() + n);
                    continue;
                }
                next = site + unzigzag(v - 1);
            }
            follower[previous] = next;
            site = next;
            previous = (int) ((site * 0x9E3779B97F4A7C15L) >>> (64 - bits));
            address[previous] += unzigzag(delta);
            slot.clear();
            slot.putLong(address[previous]).putLong(site);
            out.write(slot.array(), 0, 16);
        }
        return out.toByteArray();
    }

    /** Codec 6, as docs/compiled-in.md writes it out: codec 5 plus each entry's granule (its differences' common trailing zeros). */
    private static byte[] unpackScaled(byte[] packed) {
        int bits = 16;
        ByteBuffer in = ByteBuffer.wrap(packed).order(ByteOrder.LITTLE_ENDIAN);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteBuffer slot = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        long[] address = new long[1 << bits];
        long[] follower = new long[1 << bits];
        int[] granule = new int[1 << bits];
        java.util.Arrays.fill(granule, 6);
        long site = 0;
        int previous = 0;
        while (in.hasRemaining()) {
            int first = in.get() & 0xff;
            long delta = (first >>> 1) & 0x3f;
            if (first >= 0x80) delta |= varint(in) << 6;
            long next = follower[previous];
            boolean regrain = false;
            if ((first & 1) != 0) {
                long v = varint(in);
                if (v == 0) {
                    assertThat(delta).as("a tag token carries no address").isZero();
                    long w1 = in.getLong(in.position() + 8);
                    int n = (int) Math.min(16 * (1 + (((w1 >>> 8) & 0xffff) + 15) / 16), in.remaining());
                    out.write(packed, in.position(), n);
                    in.position(in.position() + n);
                    continue;
                }
                if (v == 1) {
                    regrain = true;
                    next = site + unzigzag(varint(in) - 1);
                } else {
                    next = site + unzigzag(v - 2);
                }
            }
            follower[previous] = next;
            site = next;
            previous = (int) ((site * 0x9E3779B97F4A7C15L) >>> (64 - bits));
            long d = unzigzag(delta);
            if (regrain) granule[previous] = Long.numberOfTrailingZeros(d);
            else d <<= granule[previous];
            address[previous] += d;
            slot.clear();
            slot.putLong(address[previous]).putLong(site);
            out.write(slot.array(), 0, 16);
        }
        return out.toByteArray();
    }

    /**
     * Codec 7, as docs/trace-format.md ("Codec 7") writes it out: runs of records that the entry's follower and
     * stride predict, then a codec 6 token split between the token stream and the value stream. Codec 9
     * ({@code shorts}, "Codec 9"): each run is doubled, plus 1 when a short token (two bytes of v) follows it.
     * Codecs 10 and 11: a run's kind in two bits, the other follower, and codec 11's index edges ({@code ~site}).
     */
    private static byte[] unpackFused(byte[] packed, int codec) {
        boolean shorts = codec >= 9;
        // the run stream's low bits: codec 9 a short token's flag, codecs 10 and 11 a kind of 2 bits (docs/trace-format.md)
        int shift = codec >= 10 ? 2 : shorts ? 1 : 0;
        int bits = 16;
        ByteBuffer head = ByteBuffer.wrap(packed);
        int nc = (int) varint(head), nt = (int) varint(head);
        ByteBuffer c = ByteBuffer.wrap(packed, head.position(), nc);
        ByteBuffer t = ByteBuffer.wrap(packed, head.position() + nc, nt);
        ByteBuffer v = ByteBuffer.wrap(packed, head.position() + nc + nt, packed.length - head.position() - nc - nt).order(ByteOrder.LITTLE_ENDIAN);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteBuffer slot = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        long[] address = new long[1 << bits], follower = new long[1 << bits], stride = new long[1 << bits], other = new long[1 << bits];
        int[] granule = new int[1 << bits];
        java.util.Arrays.fill(granule, 6);
        long site = 0;
        int h = 0;
        while (true) {
            long r = varint(c);
            for (long n = r >>> shift; n > 0; n--) {
                site = follower[h];
                if (codec == 11 && site < 0) { // an index edge: the difference is two bytes of v, signed
                    int from = h;
                    site = ~site;
                    h = (int) ((site * 0x9E3779B97F4A7C15L) >>> (64 - bits));
                    long d = (long) (short) ((v.get() & 0xff) | (v.get() & 0xff) << 8) << granule[h];
                    if (d == stride[h]) follower[from] = site;
                    stride[h] = d;
                    address[h] += d;
                    slot.clear();
                    slot.putLong(address[h]).putLong(site);
                    out.write(slot.array(), 0, 16);
                    continue;
                }
                h = (int) ((site * 0x9E3779B97F4A7C15L) >>> (64 - bits));
                address[h] += stride[h];
                slot.clear();
                slot.putLong(address[h]).putLong(site);
                out.write(slot.array(), 0, 16);
            }
            int kind = (int) (r & ((1 << shift) - 1));
            assertThat(kind).as("a run's kind").isNotEqualTo(3);
            if (codec >= 10 && kind == 2) { // the other follower at its stride: the two followers swap
                long next = other[h];
                other[h] = follower[h];
                follower[h] = next;
                site = next;
                h = (int) ((site * 0x9E3779B97F4A7C15L) >>> (64 - bits));
                address[h] += stride[h];
                slot.clear();
                slot.putLong(address[h]).putLong(site);
                out.write(slot.array(), 0, 16);
                continue;
            }
            int first = 0;
            long delta;
            if (shorts && kind == 1) {
                delta = (v.get() & 0xff) | (v.get() & 0xff) << 8;
            } else {
                if (!t.hasRemaining()) break;
                first = t.get() & 0xff;
                delta = (first >>> 1) & 0x3f;
                if (first >= 0x80) delta |= varint(v) << 6;
            }
            long next = follower[h];
            if ((first & 1) == 0 && next < 0) follower[h] = next = ~next; // codec 11: a token along an index edge makes it plain
            else if (codec == 11 && kind == 1 && r >>> shift < 8) follower[h] = ~next; // after a short run, an index edge
            boolean regrain = false;
            if ((first & 1) != 0) {
                long x = varint(v);
                if (x == 0) {
                    assertThat(delta).as("a tag token carries no address").isZero();
                    long w1 = v.getLong(v.position() + 8);
                    int n = (int) Math.min(16 * (1 + (((w1 >>> 8) & 0xffff) + 15) / 16), v.remaining());
                    out.write(packed, v.position(), n);
                    v.position(v.position() + n);
                    continue;
                }
                if (x == 1) {
                    regrain = true;
                    next = site + unzigzag(varint(v) - 1);
                } else {
                    next = site + unzigzag(x - 2);
                }
                if (codec == 10 || codec == 11 && follower[h] != ~next) other[h] = follower[h];
                follower[h] = next;
            }
            site = next;
            h = (int) ((site * 0x9E3779B97F4A7C15L) >>> (64 - bits));
            long d = unzigzag(delta);
            if (regrain) granule[h] = Long.numberOfTrailingZeros(d);
            else d <<= granule[h];
            stride[h] = d;
            address[h] += d;
            slot.clear();
            slot.putLong(address[h]).putLong(site);
            out.write(slot.array(), 0, 16);
        }
        assertThat(c.hasRemaining()).as("run bytes left over").isFalse();
        assertThat(v.hasRemaining()).as("value bytes left over").isFalse();
        return out.toByteArray();
    }

    private static long varint(ByteBuffer in) {
        long v = 0;
        for (int shift = 0; ; shift += 7) {
            int b = in.get();
            v |= (long) (b & 0x7f) << shift;
            if (b >= 0) return v;
        }
    }

    private static long unzigzag(long v) {
        return (v >>> 1) ^ -(v & 1);
    }

    private static byte[] unzstd(List<byte[]> frames) throws IOException, InterruptedException {
        if (frames.isEmpty()) return new byte[0];
        Path in = Files.createTempFile("mtr", ".zst");
        try {
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            for (byte[] f : frames) all.write(f);
            Files.write(in, all.toByteArray());
            Process p = new ProcessBuilder("zstd", "-q", "-d", "-c", in.toString()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            byte[] out = p.getInputStream().readAllBytes();
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as("zstd -d").isZero();
            return out;
        } finally {
            Files.deleteIfExists(in);
        }
    }

    /** The slots of one thread, in program order (its chunks in file order). */
    List<Slot> thread(int tid) {
        return chunks.stream().filter(c -> c.tid() == tid).flatMap(c -> c.slots().stream()).toList();
    }

    List<Access> accesses(int tid) {
        return thread(tid).stream().filter(Access.class::isInstance).map(Access.class::cast).toList();
    }

    /** Every event of the file in sequence order. */
    List<Tagged> events() {
        return chunks.stream().flatMap(c -> c.slots().stream()).filter(Tagged.class::isInstance).map(Tagged.class::cast)
                .sorted(java.util.Comparator.comparingLong(Tagged::sequence)).toList();
    }

    <T extends Event> List<T> events(Class<T> type) {
        return events().stream().map(Tagged::event).filter(type::isInstance).map(type::cast).toList();
    }

    List<Integer> tids() {
        return chunks.stream().map(Chunk::tid).distinct().toList();
    }
}
