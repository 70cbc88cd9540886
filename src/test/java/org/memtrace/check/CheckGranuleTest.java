package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The inline shadow test of a kept check ({@code CheckRewriter.shadowTest}): one compare of the shadow word of
 * an access's granule and the next passes most accesses; the exact tests after it, still inline, pass an access
 * within a partial last granule and an aligned 8-byte access before a redzone; the runtime decides the rest.
 * granule.c makes one access of 1, 2, 4 or 8 bytes at an offset in a block of 20 bytes (-O2, pruned): every
 * access inside the block is silent, whichever way it went, and every one with a byte past it (or before it)
 * is reported with the first such byte.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckGranuleTest {
    private Path dir, source;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "granule.c");
        CheckBuilds.build(dir, false, true, "-O2", "-g", "-o", "granule", "granule.c");
    }

    /** width, offset, read or write: inside the block (partial granule, crossing granules, before the redzone). */
    @ParameterizedTest
    @CsvSource({"1,19,r", "2,18,w", "4,16,r", "4,6,r", "4,14,w", "8,8,r", "8,12,r", "8,12,w", "1,0,w"})
    void anAccessInsideTheBlockIsSilent(int width, int offset, String access) throws Exception {
        CheckBuilds.Run run = CheckBuilds.run(dir, Map.of(), "./granule", "" + width, "" + offset, access);
        assertThat(run.stderr()).isEmpty();
        assertThat(run.status()).isZero();
    }

    /** width, offset, read or write, the marker of the access's line: a byte past the block (or before it). */
    @ParameterizedTest
    @CsvSource({"1,20,r,READ_1", "2,19,r,READ_2", "4,18,r,READ_4", "4,17,w,WRITE_4", "8,16,r,READ_8", "8,13,w,WRITE_8",
            "2,22,w,WRITE_2"})
    void anAccessPastTheBlockIsReportedAtItsFirstBadByte(int width, int offset, String access, String marker) throws Exception {
        CheckBuilds.Run run = CheckBuilds.run(dir, Map.of(), "./granule", "" + width, "" + offset, access);
        assertThat(run.status()).isEqualTo(1);
        String what = (access.equals("r") ? "read " : "written ") + width + (width == 1 ? " byte" : " bytes");
        int first = Math.max(offset, 20);
        assertThat(run.stderr()).matches(CheckBuilds.reportPattern(source, "memtrace: heap overflow: <calloc0001@main+N>+" + first
                + " (a block of 20 bytes, allocated at granule.c:{ALLOC}) " + what + ", " + (first - 20) + " bytes past its end, at granule.c:{"
                + marker + "} (" + (access.equals("r") ? "get" : "put") + "+N), thread ") + "\\d+\n");
    }

    @ParameterizedTest
    @CsvSource({"1,-1", "4,-4"})
    void anAccessBeforeTheBlockIsAnUnderflow(int width, int offset) throws Exception {
        CheckBuilds.Run run = CheckBuilds.run(dir, Map.of(), "./granule", "" + width, "" + offset, "r");
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.stderr()).startsWith("memtrace: heap underflow: <calloc0001@main+")
                .contains((offset) + " (a block of 20 bytes").contains(" before its start, at granule.c:" + CheckBuilds.line(source, "READ_" + width));
    }
}
