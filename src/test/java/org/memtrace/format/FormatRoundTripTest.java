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
