package org.memtrace.format;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.format.SkeletonFormat.Condition;

/**
 * Each format's encoder against its decoder, through the assembler: what the rewriters write ({@link
 * SiteFormat#directives}, {@link SkeletonFormat#directives}) assembled by {@code as} and cut out with {@code
 * objcopy}, then read by what the reader calls ({@link SiteFormat#decode}, {@link SkeletonFormat#decodeCondition}),
 * for every kind, every flag and every condition code; and the record type a loop gets read back as what it was.
 */
class FormatRoundTripTest {
    private static ByteBuffer assemble(Path dir, String section, String text) throws Exception {
        Path s = dir.resolve("t.s"), o = dir.resolve("t.o"), bin = dir.resolve("t.bin");
        Files.writeString(s, "\t.section " + section + ",\"a\",@progbits\n" + text);
        run(dir, "as", "--64", "-o", o.toString(), s.toString());
        run(dir, "objcopy", "-O", "binary", "--only-section=" + section, o.toString(), bin.toString());
        return ByteBuffer.wrap(Files.readAllBytes(bin)).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static void run(Path dir, String... command) throws Exception {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String said = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(String.join(" ", command) + ": " + said).isZero();
    }

    @Test
    void everySiteKindAndFlagReadsBackAsWritten(@TempDir Path dir) throws Exception {
        int[] flags = {0, SiteFormat.FLAG_IMPLICIT_STACK, SiteFormat.FLAG_BLOCK_START, SiteFormat.FLAG_CONDITIONAL_REP,
                SiteFormat.FLAG_KEPT_WHERE_LINKED | SiteFormat.FLAG_BLOCK_START};
        var written = new ArrayList<SiteFormat.Entry>();
        var text = new StringBuilder();
        int n = 0;
        for (int kind = SiteFormat.FIRST_KIND; kind <= SiteFormat.LAST_KIND; kind++) {
            for (int flag : flags) {
                // labels in the section itself, so that the assembler resolves the offsets: probe p<n>, instruction i<n>
                int size = 1 << (n % 5), access = n % 7;
                text.append(SiteFormat.directives("p" + n, "i" + n, kind, size, access, flag, 0xffff - n, n, 70 + n, 2 * n, 3 * n));
                written.add(new SiteFormat.Entry(0, 0, kind, size, access, flag, 0xffff - n, n, 70 + n, 2 * n, 3 * n));
                n++;
            }
        }
        for (int i = 0; i < n; i++) text.append("p").append(i).append(":\n\t.byte 0\ni").append(i).append(":\n\t.byte 0, 0\n");
        ByteBuffer b = assemble(dir, SiteFormat.SECTION, text.toString());
        long base = 0x400000;
        long labels = (long) n * SiteFormat.ENTRY_SIZE; // p0 follows the entries; each label pair takes 3 bytes
        for (int i = 0; i < n; i++) {
            SiteFormat.Entry e = SiteFormat.decode(b, i * SiteFormat.ENTRY_SIZE, base);
            SiteFormat.Entry w = written.get(i);
            assertThat(e).isEqualTo(new SiteFormat.Entry(base + labels + 3L * i, base + labels + 3L * i + 1, w.kind(), w.size(),
                    w.access(), w.flags(), w.weightMa(), w.weightAia(), w.blockRefs(), w.blockMa(), w.blockAia()));
        }
        assertThat(b.getShort(22)).isZero(); // the entry's last u16 is padding
    }

    @Test
    void everyConditionCodeAndChainReadsBackAsWritten(@TempDir Path dir) throws Exception {
        var written = new ArrayList<Condition>();
        for (int cc = 0; cc < 16; cc++) {
            if (!Condition.known(cc)) continue;
            for (int op = Condition.CMP; op <= Condition.TEST; op++)
                written.add(new Condition(op, 1 << (cc % 4), cc, cc % 2 == 0, cc % 3, SkeletonFormat.NONE, -cc, Long.MIN_VALUE + cc, cc % 4));
        }
        // a block under nested ifs: up to the rewriter's most terms, and-ed in order
        Condition chain = null;
        for (int t = 0; t < SkeletonFormat.MAX_TERMS_WRITTEN; t++)
            chain = new Condition(Condition.CMP, 8, 15 - t, t % 2 == 1, t, t + 1, 0, 0, 3, chain);
        written.add(chain);
        var text = new StringBuilder();
        for (Condition c : written) text.append(SkeletonFormat.directives(c));
        ByteBuffer b = assemble(dir, SkeletonFormat.SECTION, text.toString());
        List<Condition> read = new ArrayList<>();
        for (int at = 0; at < b.capacity(); ) {
            SkeletonFormat.Read r = SkeletonFormat.decodeCondition(b, at, 8);
            assertThat(r).isNotNull();
            read.add(r.condition());
            at = r.end();
        }
        assertThat(read).isEqualTo(written);
    }

    @Test
    void everySkeletonEntryReadsBackAsWritten(@TempDir Path dir) throws Exception {
        var head = new SkeletonEntries.Head(SkeletonFormat.RECORD_LOOP_ENTERED_MID, true, 2, 1, 2, 3, 0, 0);
        var slots = List.of(new SkeletonEntries.Slot(-8, SkeletonFormat.NONE, "rdi"), new SkeletonEntries.Slot(1L << 40, 0, "r15"));
        var items = List.of(new SkeletonEntries.Item(0, SiteFormat.MODIFY, 8, 2, SiteFormat.FLAG_BLOCK_START, 0xffff, 1, 2, 3, 4, 0, 1, 8, 3,
                        SkeletonFormat.OPTIONAL, false, Long.MIN_VALUE),
                new SkeletonEntries.Item(0, SkeletonFormat.ITEM_LOGGED, 4, 0, 0, 1, 1, 0, 0, 0, SkeletonFormat.NONE, SkeletonFormat.NONE, 0, 0, 2, true, 0),
                new SkeletonEntries.Item(0, SkeletonFormat.ITEM_NESTED, 0, 0, 0, 0, 0, 0, 0, 0, SkeletonFormat.NONE, SkeletonFormat.NONE, 0, 0, 0, false, 7));
        var markers = List.of(new SkeletonEntries.Marker(0, 2, true, SkeletonFormat.MARKER_SIDE_EXIT),
                new SkeletonEntries.Marker(0, 0xffff, false, SkeletonFormat.MARKER_COMPUTED));
        var tail = new SkeletonEntries.Tail(3, true, 0xfffe, 0x8001);
        var value = new SkeletonEntries.Value(-1, new int[] {0, 1}, new long[] {16, -4});
        var text = new StringBuilder(SkeletonEntries.version()).append(SkeletonEntries.directives(head, "e", "x"));
        for (var slot : slots) text.append(SkeletonEntries.directives(slot));
        for (int i = 0; i < items.size(); i++) text.append(SkeletonEntries.directives(items.get(i), "i" + i));
        text.append(SkeletonEntries.directives(markers.get(0), "m")).append(SkeletonEntries.directives(markers.get(1), null));
        text.append(SkeletonEntries.directives(tail)).append(SkeletonEntries.directives(value)).append(SkeletonEntries.declined(19, "i1"));
        text.append("e:\n\t.byte 0\nx:\n\t.byte 0\nm:\n\t.byte 0\ni0:\n\t.byte 0\ni1:\n\t.byte 0\ni2:\n\t.byte 0\n");
        ByteBuffer b = assemble(dir, SkeletonFormat.SECTION, text.toString());
        long base = 0x1000;
        int at = 0;
        assertThat(b.get(0)).isEqualTo((byte) SkeletonFormat.RECORD_VERSION);
        assertThat(b.get(1)).isEqualTo((byte) SkeletonFormat.VERSION);
        at += SkeletonFormat.VERSION_SIZE;
        int labels = SkeletonFormat.VERSION_SIZE + SkeletonFormat.LOOP_HEAD_SIZE + 2 * SkeletonFormat.SLOT_SIZE + 3 * SkeletonFormat.ITEM_SIZE
                + 2 * SkeletonFormat.MARKER_SIZE + SkeletonFormat.TAIL_SIZE + value.size() + SkeletonFormat.DECLINED_SIZE;
        assertThat(b.capacity()).isEqualTo(labels + 6); // e, x, m, i0, i1, i2: a byte each
        assertThat(SkeletonEntries.decodeHead(b, at, base)).isEqualTo(new SkeletonEntries.Head(head.type(), true, 2, 1, 2, 3,
                base + labels, base + labels + 1));
        at += SkeletonFormat.LOOP_HEAD_SIZE;
        for (var slot : slots) {
            assertThat(SkeletonEntries.decodeSlot(b, at)).isEqualTo(slot);
            at += SkeletonFormat.SLOT_SIZE;
        }
        for (int i = 0; i < items.size(); i++) {
            var w = items.get(i);
            assertThat(SkeletonEntries.decodeItem(b, at, base)).isEqualTo(new SkeletonEntries.Item(base + labels + 3 + i, w.kind(), w.size(),
                    w.access(), w.flags(), w.weightMa(), w.weightAia(), w.blockRefs(), w.blockMa(), w.blockAia(), w.baseSlot(),
                    w.indexSlot(), w.scale(), w.phase(), w.cond(), w.call(), w.displacement()));
            at += SkeletonFormat.ITEM_SIZE;
        }
        assertThat(SkeletonEntries.decodeMarker(b, at, base)).isEqualTo(new SkeletonEntries.Marker(base + labels + 2, 2, true,
                SkeletonFormat.MARKER_SIDE_EXIT));
        at += SkeletonFormat.MARKER_SIZE;
        assertThat(SkeletonEntries.decodeMarker(b, at, base)).as("a computed marker: no probe, offset 0")
                .isEqualTo(new SkeletonEntries.Marker(base + at, 0xffff, false, SkeletonFormat.MARKER_COMPUTED));
        at += SkeletonFormat.MARKER_SIZE;
        assertThat(SkeletonEntries.decodeTail(b, at)).isEqualTo(tail);
        at += SkeletonFormat.TAIL_SIZE;
        SkeletonEntries.Value v = SkeletonEntries.decodeValue(b, at);
        assertThat(v.constant()).isEqualTo(-1);
        assertThat(v.slots()).containsExactly(0, 1);
        assertThat(v.factors()).containsExactly(16, -4);
        at += v.size();
        assertThat(b.get(at)).isEqualTo((byte) SkeletonFormat.RECORD_DECLINED);
        assertThat(b.get(at + 1)).isEqualTo((byte) 19);
        assertThat(b.getInt(at + 4)).isEqualTo(labels + 4 - (at + 4));
    }

    @Test
    void aConditionTheReplayCannotEvaluateIsRefused(@TempDir Path dir) throws Exception {
        for (Condition bad : List.of(new Condition(3, 8, 4, true, 0, 1, 0, 0, 0), new Condition(Condition.CMP, 3, 4, true, 0, 1, 0, 0, 0),
                new Condition(Condition.CMP, 8, 10, true, 0, 1, 0, 0, 0), new Condition(Condition.TEST, 8, 4, true, 2, 1, 0, 0, 0))) {
            ByteBuffer b = assemble(dir, SkeletonFormat.SECTION, SkeletonFormat.directives(bad));
            assertThat(SkeletonFormat.decodeCondition(b, 0, 2)).as(bad.toString()).isNull();
        }
    }

    @Test
    void aLoopsRecordTypeSaysBackWhatTheLoopIs() {
        for (int bits = 0; bits < 8; bits++) {
            boolean mid = (bits & 1) != 0, below = (bits & 2) != 0, empty = (bits & 4) != 0;
            int type = SkeletonFormat.loopType(mid, below, empty);
            assertThat(SkeletonFormat.isLoop(type)).isTrue();
            assertThat(SkeletonFormat.hasTail(type)).isEqualTo(mid || below);
            // a loop tested below its top is always one whose run may end at the test (the rewriter's top-tested shapes)
            if (!mid) assertThat(SkeletonFormat.mayBeEmpty(type)).isEqualTo(below || empty);
        }
        assertThat(SkeletonFormat.loopType(false, false, false)).isEqualTo(1);
        assertThat(SkeletonFormat.loopType(false, false, true)).isEqualTo(3);
        assertThat(SkeletonFormat.loopType(false, true, false)).isEqualTo(4);
        assertThat(SkeletonFormat.loopType(true, true, true)).isEqualTo(5);
        assertThat(SkeletonFormat.isLoop(SkeletonFormat.RECORD_VERSION)).isFalse();
        assertThat(SkeletonFormat.markerKind(false, false)).isZero();
        assertThat(SkeletonFormat.markerKind(false, true)).isEqualTo(1);
        assertThat(SkeletonFormat.markerKind(true, true)).isEqualTo(SkeletonFormat.MARKER_COMPUTED);
        assertThat(SkeletonFormat.reason(21)).isEqualTo("inner loop whose trip count the outer loop's registers do not give");
        assertThat(SkeletonFormat.reason(99)).isEqualTo("reason 99");
    }
}
