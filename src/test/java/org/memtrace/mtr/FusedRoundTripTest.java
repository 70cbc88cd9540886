package org.memtrace.mtr;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Codecs 7, 8, 9, 10 and 11 both ways: hand-made chunks of slots go through the runtime's own encoders
 * (agent/runtime/rt_fused.c compiled with fused_probe.c, rt_period.c with period_probe.c) and come back
 * exactly through {@link FusedSlots} and {@link PeriodSlots}: constant strides, random
 * indexes, re-grained sites, differences past 56 bits (the varint's long form), tags, a chunk packed in two
 * calls (a buffer's tail and the next head), recording off, and the chunks of two threads encoded in turn with
 * one table, as the writer thread does, and read in turn with one table, as a reader does.
 */
class FusedRoundTripTest {
    private static final long SITE_A = 0x401020L, SITE_B = 0x401034L, SITE_C = 0x40104bL, SITE_FAR = 0x7f12_3456_7890L;
    @TempDir
    static Path dir;
    private static Path probe, periodProbe;

    /** One chunk: its slot words, where the first fused_pack call ends, and whether recording was off. */
    record Chunk(long[] words, int split, boolean eventsOnly) {
        Chunk(long[] words) {
            this(words, words.length, false);
        }
    }

    @BeforeAll
    static void compile() throws Exception {
        probe = compile("fused_probe", "rt_fused.c");
        periodProbe = compile("period_probe", "rt_period.c");
    }

    private static Path compile(String name, String encoder) throws Exception {
        Path source = dir.resolve(name + ".c");
        try (InputStream in = FusedRoundTripTest.class.getResourceAsStream(name + ".c")) {
            assertThat(in).as("probe source on the test class path").isNotNull();
            Files.copy(in, source);
        }
        Path runtime = Path.of("agent", "runtime").toAbsolutePath();
        Path binary = dir.resolve(name);
        Process p = new ProcessBuilder("gcc", "-O2", "-std=gnu11", "-I", runtime.toString(), "-o", binary.toString(),
                source.toString(), runtime.resolve(encoder).toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("gcc: %s", out).isZero();
        return binary;
    }

    @Test
    void constantStridesAndARandomIndexComeBack() throws Exception {
        // spmv's loop: val[k] and colidx[k] at constant strides, p[colidx[k]] at a random index
        var w = new Words();
        var r = new SplittableRandom(1);
        for (int k = 0; k < 20_000; k++) {
            w.record(0x60_0000L + 8L * k, SITE_A);
            w.record(0x80_0000L + 4L * k, SITE_B);
            w.record(0xa0_0000L + 8L * r.nextInt(1 << 14), SITE_C);
        }
        List<byte[]> payloads = roundTrip(List.of(new Chunk(w.toArray())));
        // codec 9: the random index's misses are short tokens, small differences too (all but the first few,
        // before the site is predicted), an odd run before each in c and no byte in t; codec 7's have a byte in t each
        var c7 = streams(payloads.get(0)).get(1);
        var c9 = streams(payloads.get(2));
        long shorts = Arrays.stream(c9.get(0)).filter(run -> (run & 1) == 1).count();
        assertThat(shorts).as("short tokens").isBetween(19_990L, 20_000L);
        assertThat(c9.get(1).length).as("codec 9's t, codec 7's %d", c7.length).isEqualTo(c7.length - shorts);
    }

    @Test
    void rowEndsAreHitsAtTheOtherFollower() throws Exception {
        // spmv's rows: colidx[k], p[colidx[k]], a[k] for 11 or 12 k, then q[j], rowstr[j + 1], rowstr[j + 2]; the
        // last site of the row is followed by q[j] at each row end and by colidx[k] otherwise. Codec 10 writes both
        // as hits of kind 2 (the other follower, at its stride) where codec 9 writes two tokens with the site a row
        var w = new Words();
        var r = new SplittableRandom(5);
        long k = 0;
        int rows = 2_000;
        for (int row = 0; row < rows; row++) {
            for (int n = 11 + r.nextInt(2); n > 0; n--, k++) {
                // once, an odd byte: a re-grained hit, whose token names the follower and leaves the other one
                w.record(0x80_0000L + 4L * k + (row == 1_000 && n == 5 ? 1 : 0), SITE_B);
                w.record(0xa0_0000L + 8L * r.nextInt(1 << 14), SITE_C);
                w.record(0x60_0000L + 8L * k, SITE_A);
            }
            w.record(0x70_0000L + 8L * row, SITE_FAR);
            w.record(0x90_0004L + 4L * row, SITE_FAR + 7);
            w.record(0x90_0008L + 4L * row, SITE_FAR + 30);
        }
        List<byte[]> payloads = roundTrip(List.of(new Chunk(w.toArray())));
        var c9 = streams(payloads.get(2));
        var c10 = streams(payloads.get(3));
        long others = Arrays.stream(c10.get(0)).filter(run -> (run & 3) == 2).count();
        assertThat(others).as("hits at the other follower").isBetween(2L * rows - 8, 2L * rows);
        assertThat(c9.get(1).length).as("codec 9's tokens").isGreaterThanOrEqualTo(2 * rows);
        assertThat(c10.get(1).length).as("codec 10's tokens (small random differences)").isLessThan(rows / 20);
    }

    @Test
    void randomIndexesAlongIndexEdgesComeBack() throws Exception {
        // codec 11: spmv's rows (colidx[k], p[colidx[k]], a[k], then q[j], rowstr twice); p's records, once its
        // edge is an index edge, are two bytes of v within the run, so c holds about two bytes a row, not one a
        // record. Off the lane, each must come back: an index past 16 bits (a token at the predicted site), an odd
        // byte near the end (re-grained, naming its site), the index's difference twice (the edge plain again),
        // another site along the index edge, a tag between, and rows whose index walks at a stride (the period
        // skip must not take an index edge's records for hits)
        var w = new Words();
        var r = new SplittableRandom(6);
        long k = 0;
        int rows = 2_000;
        long p = 0xa0_0000L;
        for (int row = 0; row < rows; row++) {
            for (int n = 11 + r.nextInt(2); n > 0; n--, k++) {
                w.record(0x80_0000L + 4L * k, SITE_B);
                if (row % 100 == 10 && n == 3) w.record(0x40_0000L + 8L * row, SITE_FAR + 50); // another site after colidx
                long before = p;
                p = 0xa0_0000L + 8L * r.nextInt(1 << 14);
                if (row % 100 == 20 && n == 4) p = 0xa0_0000L + 8L * (1 << 16) + 8L * r.nextInt(100); // past 16 bits
                if (row == rows - 5 && n == 4) p += 3; // an odd byte: re-grained (the granule 0 from there on)
                if (row % 100 == 40 && n == 4) p = before + 8; // the difference
                if (row % 100 == 40 && n == 3) p = before + 8; // ... twice: a plain edge
                if (row % 100 >= 60 && row % 2 == 0) p = before + 8; // rows of columns in turn: a period skip's window
                w.record(p, SITE_C);
                if (row % 100 == 50 && n == 5) w.tag(row, 16);
                w.record(0x60_0000L + 8L * k, SITE_A);
            }
            w.record(0x70_0000L + 8L * row, SITE_FAR);
            w.record(0x90_0004L + 4L * row, SITE_FAR + 7);
            w.record(0x90_0008L + 4L * row, SITE_FAR + 30);
        }
        long[] words = w.toArray();
        List<byte[]> payloads = roundTrip(List.of(new Chunk(words, 2 * 4_321, false), new Chunk(words)));
        var c10 = streams(payloads.get(3)).get(0);
        var c11 = streams(payloads.get(4)).get(0);
        assertThat(c10.length).as("codec 10's runs: one a record of p").isGreaterThan(11 * rows);
        assertThat(c11.length).as("codec 11's runs").isBetween(2 * rows - 40, 2 * rows + 700);
        // the period skip (every 16th hit of a run) must not take an index edge's record for a hit: a loop of 3
        // sites whose index turns into a stride at each of 16 places, so that some test meets its first records
        List<Chunk> walks = new ArrayList<>();
        for (int from = 40; from < 56; from++) {
            var u = new Words();
            long q = 0xa0_0000L;
            for (int j = 0; j < 80; j++) {
                u.record(0x80_0000L + 4L * j, SITE_B);
                u.record(q = j < from ? 0xa0_0000L + 8L * r.nextInt(1 << 14) : q + 8, SITE_C);
                u.record(0x60_0000L + 8L * j, SITE_A);
            }
            walks.add(new Chunk(u.toArray()));
        }
        roundTrip(walks);
    }

    @Test
    void differencesAtTheShortTokensBoundsComeBack() throws Exception {
        // a site of granule 0 (an odd first difference) whose scaled differences, zigzag, are 0, 63, 64, 65535,
        // 65536 and their neighbours: codec 9's one-byte tokens, short tokens and varint tokens, each a miss
        var w = new Words();
        long address = 0x60_0001L;
        w.record(0x60_0000L, SITE_A);
        w.record(address, SITE_A);
        long[] steps = {0, 5, 0, 31, -32, 32, -31, 33, 1, 32767, -32768, 32768, -32769, 1 << 20, -1, 0, 2, 0};
        for (int round = 0; round < 3; round++)
            for (long step : steps) {
                address += step;
                w.record(address, SITE_A);
                w.record(0x90_0000L + 8L * w.n, SITE_B); // a hit between: the next record's site is predicted
            }
        roundTrip(List.of(new Chunk(w.toArray())));
    }

    @Test
    void regrainsHugeDifferencesAndTagsComeBack() throws Exception {
        var w = new Words();
        var r = new SplittableRandom(2);
        for (int k = 0; k < 5_000; k++) {
            w.record(0xa0_0000L + 8L * r.nextInt(1 << 20) + (k % 97 == 0 ? 3 : 0), SITE_A); // an odd byte: a re-grain
            w.record(k % 2 == 0 ? 0x10L : 0xfff0_0000_0000_0000L, SITE_FAR); // 60-bit differences: long varints
            if (k % 500 == 0) w.tag(k, 40); // an event of 40 bytes: its slot and three event slots
            w.record(r.nextLong(), SITE_B); // any address at all
        }
        roundTrip(List.of(new Chunk(w.toArray())));
    }

    @Test
    void aChunkPackedInTwoCallsAndOneWithRecordingOffComeBack() throws Exception {
        var w = new Words();
        for (int k = 0; k < 3_000; k++) {
            w.record(0x60_0000L + 16L * k, SITE_A);
            if (k == 1_000) w.tag(7, 16);
            w.record(0x70_0000L - 8L * k, SITE_B);
        }
        long[] words = w.toArray();
        var off = new Words();
        off.record(0x1000, SITE_A);
        off.tag(3, 8);
        off.record(0x2000, SITE_B);
        roundTrip(List.of(new Chunk(words, 2 * 1_234, false), new Chunk(words, 4_002, false), new Chunk(off.toArray(), 2, true)));
    }

    @Test
    void twoThreadsChunksEncodedInTurnWithOneTableComeBack() throws Exception {
        var r = new SplittableRandom(3);
        List<Chunk> chunks = new ArrayList<>();
        for (int round = 0; round < 6; round++) {
            var w = new Words();
            long base = round % 2 == 0 ? SITE_A : SITE_FAR; // thread 1's sites, then thread 2's
            for (int k = 0; k < 4_000; k++) {
                long site = base + 16L * r.nextInt(round + 2);
                w.record(0x10_0000L * (round + 1) + 8L * (k % (64 + round)) + (r.nextInt(8) == 0 ? 8L * r.nextInt(1000) : 0), site);
            }
            chunks.add(new Chunk(w.toArray(), 2 * r.nextInt(4_000), false));
        }
        roundTrip(chunks);
    }

    @Test
    void chunksOfManySitesTakeTheFetchingPassAndComeBack() throws Exception {
        // a rewritten python3's start: thousands of sites a chunk. A chunk after one that set FUSED_MANY (2,048)
        // entries or more is packed by pack10_many, which fetches the entry of a record FUSED_AHEAD (16) on; the
        // second chunk is packed in two calls, the second of 10 records (fewer than 16 ahead: none fetched),
        // and a third chunk of 5 records takes the same pass. Runs of hits between the misses: a pass that
        // wrote codec 9's runs or no short tokens decodes alike where every record misses (every run 0)
        var r = new SplittableRandom(5);
        List<Chunk> chunks = new ArrayList<>();
        for (int round = 0; round < 2; round++) {
            var w = new Words();
            for (int k = 0; k < 12_000; k++) {
                if (k >= 3_000 && k / 64 % 2 == 0) { // a loop of 3 sites at constant strides: runs of hits
                    w.record(0x40_0000L * (k % 3 + 1) + 24L * k, SITE_A + 16L * (k % 3));
                } else { // the first 3,000 sites in turn (FUSED_MANY entries set), then any of them
                    int s = k < 3_000 ? k : r.nextInt(3_000);
                    w.record(0x100_0000L * (s % 7) + 8L * k + (s % 3 == 0 ? 0 : 8L * r.nextInt(64)), 0x50_0000L + 16L * s);
                }
                if (k % 2_500 == 0) w.tag(k, 16);
            }
            long[] words = w.toArray();
            chunks.add(new Chunk(words, round == 0 ? words.length : words.length - 2 * 10, false));
        }
        var small = new Words();
        for (int k = 0; k < 5; k++) small.record(0x70_0000L + 8L * k, 0x50_0000L + 16L * k);
        chunks.add(new Chunk(small.toArray()));
        roundTrip(chunks);
    }

    @Test
    void rowsOfOtherLengthsAndSitesBeyondTheWindowComeBack() throws Exception {
        // codec 8's period changes: an inner loop of 3 sites whose rows take 2-14 iterations (J tokens, the
        // period left for a multiple of it), row code of 3 sites, and 100 sites in turn (F tokens, its table)
        var w = new Words();
        var r = new SplittableRandom(4);
        long k = 0;
        for (int row = 0; row < 3_000; row++) {
            for (int n = 2 + r.nextInt(13); n > 0; n--, k++) {
                w.record(0x60_0000L + 8L * k, SITE_A);
                w.record(0x80_0000L + 4L * k, SITE_B);
                w.record(0xa0_0000L + 8L * r.nextInt(1 << 14), SITE_C);
            }
            w.record(0x70_0000L + 8L * row, SITE_FAR);
            w.record(0x90_0000L + 4L * row, SITE_FAR + 7);
            w.record(0x90_0004L + 4L * row, SITE_FAR + 30);
            if (row % 100 == 0)
                for (int s = 0; s < 100; s++) w.record(0x1000L * s + row, 0x50_0000L + 16L * s);
        }
        long[] words = w.toArray();
        roundTrip(List.of(new Chunk(words, 2 * 777, false), new Chunk(words, 2 * 40, false)));
    }

    @Test
    void periodicLoopsSkippedWithoutTheTableComeBack() throws Exception {
        // rt_fused.c's period skip (hits found by slot j - slot j-k == slot j-k - slot j-2k, the table written
        // once after): gemm's rows of 3 sites, one site, 8 sites and 9 (past PERIOD_MAX), a stride change at each
        // place of a 4-record test, two sites of one table entry, a site twice a period, a tag amid a stretch,
        // and the chunk split between two calls amid a stretch
        long twin = SITE_A + 1;
        while (FusedSlots.entry(twin) != FusedSlots.entry(SITE_A)) twin++;
        var w = new Words();
        for (int row = 0; row < 40; row++)
            for (int j = 0; j < 256; j++) {
                w.record(0x60_0000L + 2048L * row + 8L * j, SITE_A);
                w.record(0x80_0000L + 8L * j, SITE_B);
                w.record(0x60_0000L + 2048L * row + 8L * j, SITE_C);
            }
        for (int brk = 0; brk < 8; brk++) {
            long address = 0x10_0000L * (brk + 1);
            for (int j = 0; j < 60 + brk; j++) w.record(address += 8, SITE_FAR);
            for (int j = 0; j < 60; j++) w.record(address += 24, SITE_FAR);
        }
        for (int sites : new int[] {8, 9})
            for (int j = 0; j < 500; j++)
                for (int s = 0; s < sites; s++) w.record(0x100_0000L * s + 16L * j + (j == 300 && s == 5 ? 8 : 0), SITE_FAR + s);
        for (int j = 0; j < 500; j++) {
            w.record(0x30_0000L + 8L * j, SITE_A);
            w.record(0x40_0000L + 4L * j, twin);
            if (j == 250) w.tag(j, 24);
        }
        for (int j = 0; j < 500; j++) {
            w.record(0x50_0000L + 8L * j, SITE_A);
            w.record(0x58_0000L + 8L * j, SITE_B);
            w.record(0x50_0000L + 8L * j + 4, SITE_A);
            w.record(0x5c_0000L - 8L * j, SITE_C);
            if (j == 400) w.tag(j, 8);
        }
        long[] words = w.toArray();
        roundTrip(List.of(new Chunk(words, 2 * (3 * 256 * 7 + 100), false), new Chunk(words)));
    }

    @Test
    void periodSkipOfEachLengthStopsAtEachPlaceOfItsTest() throws Exception {
        // rt_fused.c's period_run tests R records at a time against predictions (R = 4, 4, 6, 4, 5, 6 for periods
        // 1-6; 7 and 8 the older test): for periods 1-8, one record off its lane's stride, then one at its lane's
        // address under another site, at each of 8 places in turn, past the first 16 hits; each must come back
        for (int k = 1; k <= 8; k++)
            for (int site = 0; site < 2; site++) {
                var w = new Words();
                for (int brk = 0; brk < 8; brk++) {
                    int at = 40 * k + brk;
                    for (int n = 0; n < 60 * k; n++) {
                        int s = n % k, j = n / k;
                        long address = 0x100_0000L * (s + 1) + 0x1000L * brk + (8L + 8 * s) * j + (n == at && site == 0 ? 8 : 0);
                        w.record(address, n == at && site == 1 ? SITE_FAR + 20 : SITE_FAR + s);
                    }
                }
                roundTrip(List.of(new Chunk(w.toArray())));
            }
    }

    /** Encodes the chunks in turn with each codec's encoder; each must decode to its own slots, counted. Returns codec 7's, 8's, 9's, 10's and 11's first payloads. */
    private static List<byte[]> roundTrip(List<Chunk> chunks) throws IOException, InterruptedException {
        return List.of(roundTrip(chunks, 7), roundTrip(chunks, 8), roundTrip(chunks, 9), roundTrip(chunks, 10), roundTrip(chunks, 11));
    }

    private static byte[] roundTrip(List<Chunk> chunks, int codec) throws IOException, InterruptedException {
        ByteBuffer in = ByteBuffer.allocate(chunks.stream().mapToInt(c -> 12 + 8 * c.words().length).sum()).order(ByteOrder.LITTLE_ENDIAN);
        for (Chunk c : chunks) {
            in.putInt(c.eventsOnly() ? 1 : 0).putInt(c.split()).putInt(c.words().length);
            for (long x : c.words()) in.putLong(x);
        }
        Process p = new ProcessBuilder((codec == 8 ? periodProbe : probe).toString(), Integer.toString(codec)).start();
        var collected = new ByteArrayOutputStream();
        Thread reader = Thread.ofVirtual().start(() -> {
            try {
                p.getInputStream().transferTo(collected);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        try (var os = p.getOutputStream()) {
            os.write(in.array());
        }
        reader.join();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
        ByteBuffer out = ByteBuffer.wrap(collected.toByteArray()).order(ByteOrder.LITTLE_ENDIAN);
        var table = new PackedSlots.Table();
        byte[] first = null;
        for (Chunk c : chunks) {
            byte[] payload = new byte[(int) out.getLong()];
            out.get(payload);
            if (first == null) first = payload;
            long records = out.getLong(), dropped = out.getLong(), slots = out.getLong();
            long[] expected = kept(c);
            long expectedRecords = (expected.length - 2 * slots) / 2;
            assertThat(records).as("records").isEqualTo(expectedRecords);
            assertThat(records + dropped + slots).as("every slot counted").isEqualTo(c.words().length / 2);
            long[] decoded = new long[expected.length];
            try {
                if (codec != 8) FusedSlots.unpack(payload, payload.length, decoded, decoded.length, table, FusedSlots.shift(codec), codec == 11);
                else PeriodSlots.unpack(payload, payload.length, decoded, decoded.length, table);
            } catch (MtrFormatException e) {
                throw new AssertionError("the reader refused codec " + codec + "'s chunk", e);
            }
            assertThat(decoded).as("codec %d, chunk of %d words", codec, c.words().length).isEqualTo(expected);
        }
        assertThat(out.remaining()).isZero();
        return first;
    }

    /** A codec 7 or 9 payload's run stream (each varint) and token stream (each byte). */
    private static List<long[]> streams(byte[] p) throws MtrFormatException {
        var header = new PackedSlots.Cursor(p, p.length);
        int nc = (int) header.varint(), nt = (int) header.varint(), at = header.at;
        var runs = new PackedSlots.Cursor(p, at + nc);
        runs.at = at;
        var r = new Words();
        while (runs.at < at + nc) r.add(runs.varint());
        long[] t = new long[nt];
        for (int i = 0; i < nt; i++) t[i] = p[at + nc + i] & 0xff;
        return List.of(r.toArray(), t);
    }

    /** The slot words a chunk decodes to: all of them, or, recording off, its tags and their event slots alone. */
    private static long[] kept(Chunk c) {
        if (!c.eventsOnly()) return c.words();
        long[] w = c.words();
        var kept = new Words();
        for (int i = 0; i < w.length;) {
            if (w[i + 1] < 0) {
                int n = 2 + (int) ((((w[i + 1] >>> 8) & 0xffff) + 15) / 16) * 2;
                for (int k = 0; k < n; k++) kept.add(w[i + k]);
                i += n;
            } else {
                i += 2;
            }
        }
        return kept.toArray();
    }

    /** Slot words being made: access records {address, site} and tags {value, 1 << 63 | bytes << 8} with their event slots. */
    private static final class Words {
        private long[] a = new long[1024];
        private int n;

        void add(long x) {
            if (n == a.length) a = Arrays.copyOf(a, 2 * n);
            a[n++] = x;
        }

        void record(long address, long site) {
            add(address);
            add(site);
        }

        void tag(long value, int bytes) {
            add(value);
            add(1L << 63 | (long) bytes << 8 | 5);
            for (int k = 0; k < (bytes + 15) / 16 * 2; k++) add(0x1111_0000L + k);
        }

        long[] toArray() {
            return Arrays.copyOf(a, n);
        }
    }
}
