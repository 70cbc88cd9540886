package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Vectorised loops under {@code cc --check} ({@link PlainBodies}): vector.c built {@code -O2 -g}. scale's loop
 * keeps gcc's vector code (gcc's body without checks, one range per stream at the loop's entry) and still
 * reports a block one element too short with the right object, offset and line; gather's index comes from
 * memory, so its function keeps gcc's per-access checks and reports at the access. gemm's inner ranges and its
 * {@code a[i][k]} are checked at its middle loop's entry ({@link NestHoist}), matmul's row of A with a shift at
 * its dot product's entry, and its column walk over B as B's rows once per call; they report a matrix one
 * element short. Twins stay silent.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckVectorTest {
    private static final String MARK = "# memtrace check: gcc's body without its checks";
    Path dir, source;
    String asm;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "vector.c");
        CheckBuilds.build(dir, false, true, "--keep-asm", "asm", "-O2", "-g", "-o", "vector", "vector.c");
        try (Stream<Path> kept = Files.list(dir.resolve("asm"))) {
            List<Path> files = kept.toList();
            assertThat(files).hasSize(1);
            asm = Files.readString(files.getFirst());
        }
    }

    /** The lines of one function in the kept assembly, from its label to its .size. */
    private String function(String name) {
        int start = asm.indexOf("\n" + name + ":\n"), end = asm.indexOf("\t.size\t" + name + ", .-" + name, start);
        assertThat(start).as(name).isPositive();
        return asm.substring(start, end);
    }

    @Test
    void aVectorisedLoopOverflowingByOneElementIsReportedByItsRange() throws Exception {
        String scale = function("scale");
        assertThat(scale).contains(MARK).containsPattern("\t(add|mul)pd\t").doesNotContain("__memtrace_slow_");
        // two range checks at the loop's entry, s read and d written, and no other check
        String entry = "call\t*__memtrace_check_loop@GOTPCREL(%rip)\t# memtrace-check-loc 1 " + CheckBuilds.line(source, "SCALE") + "\n";
        assertThat(scale.split(java.util.regex.Pattern.quote(entry), -1)).hasSize(3);
        assertThat(scale.split("call\t", -1)).hasSize(3);
        CheckBuilds.Run bad = CheckBuilds.run(dir, Map.of(), "./vector", "scale", "bad");
        assertThat(bad.stderr()).matches("memtrace: heap overflow: <malloc0001@main\\+\\d+>\\+504 \\(a block of 504 bytes, "
                + "allocated at vector.c:" + CheckBuilds.line(source, "SCALE_ALLOC") + "\\) written 16 bytes by the loop, "
                + "0 bytes past its end, at vector.c:" + CheckBuilds.line(source, "SCALE") + " \\(scale\\+\\d+\\), thread \\d+\n");
        assertThat(bad.status()).isEqualTo(1);
        CheckBuilds.Run good = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK", "summary"), "./vector", "scale", "good");
        assertThat(good.stdout()).isEqualTo("0\n");
        assertThat(good.stderr()).matches("memtrace: check summary: .* 0 errors\n");
        assertThat(good.status()).isZero();
    }

    @Test
    void aLoopWhoseRangeCannotBeComputedKeepsPerAccessChecks() throws Exception {
        String gather = function("gather");
        assertThat(gather).doesNotContain(MARK).contains("\t__memtrace_slow_load8@PLT");
        CheckBuilds.Run bad = CheckBuilds.run(dir, Map.of(), "./vector", "gather", "bad");
        assertThat(bad.stderr()).matches("memtrace: heap overflow: <calloc0001@main\\+\\d+>\\+512 \\(a block of 512 bytes, "
                + "allocated at vector.c:" + CheckBuilds.line(source, "GATHER_ALLOC") + "\\) read 8 bytes, 0 bytes past its end, "
                + "at vector.c:" + CheckBuilds.line(source, "GATHER") + " \\(gather\\+\\d+\\), thread \\d+\n");
        assertThat(bad.status()).isEqualTo(1);
        CheckBuilds.Run good = CheckBuilds.run(dir, Map.of(), "./vector", "gather", "good");
        assertThat(good.stderr()).isEmpty();
        assertThat(good.stdout()).isEqualTo("0\n");
        assertThat(good.status()).isZero();
    }

    /** The number of range checks (calls of __memtrace_check_loop) in a function's kept assembly. */
    private int rangeChecks(String body) {
        return body.split("call\t\\*__memtrace_check_loop@GOTPCREL\\(%rip\\)", -1).length - 1;
    }

    @Test
    void aNestsInnerRangesAreCheckedOncePerOuterIteration() throws Exception {
        String gemm = function("gemm");
        assertThat(gemm).contains(MARK).containsPattern("\t(add|mul)pd\t").doesNotContain("__memtrace_slow_");
        // B's rows and C's row (inner ranges) and a[i][k] (the middle loop's own), all before the middle loop
        assertThat(rangeChecks(gemm)).isEqualTo(3);
        CheckBuilds.Run bad = CheckBuilds.run(dir, Map.of(), "./vector", "gemm", "bad");
        assertThat(bad.stderr()).matches("memtrace: heap overflow: <calloc0002@main\\+\\d+>\\+32760 \\(a block of 32760 bytes, "
                + "allocated at vector.c:" + CheckBuilds.line(source, "NEST_ALLOC") + "\\) read 8 bytes by the loop, "
                + "0 bytes past its end, at vector.c:" + CheckBuilds.line(source, "GEMM") + " \\(gemm\\+\\d+\\), thread \\d+\n");
        assertThat(bad.status()).isEqualTo(1);
        CheckBuilds.Run good = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK", "summary"), "./vector", "gemm", "good");
        assertThat(good.stdout()).isEqualTo("0\n");
        assertThat(good.stderr()).matches("memtrace: check summary: .* 0 errors\n");
        assertThat(good.status()).isZero();
    }

    @Test
    void aDotProductCountingOnItsColumnGetsItsRowByAShift() throws Exception {
        String matmul = function("matmul");
        assertThat(matmul).contains(MARK).contains("\tsarq\t$9, %rax").doesNotContain("__memtrace_slow_");
        CheckBuilds.Run bad = CheckBuilds.run(dir, Map.of(), "./vector", "matmul", "bad");
        assertThat(bad.stderr()).matches("memtrace: heap overflow: <calloc0002@main\\+\\d+>\\+32760 \\(a block of 32760 bytes, "
                + "allocated at vector.c:" + CheckBuilds.line(source, "NEST_ALLOC") + "\\) read 8 bytes by the loop, "
                + "0 bytes past its end, at vector.c:" + CheckBuilds.line(source, "MATMUL") + " \\(matmul\\+\\d+\\), thread \\d+\n");
        assertThat(bad.status()).isEqualTo(1);
        CheckBuilds.Run good = CheckBuilds.run(dir, Map.of(), "./vector", "matmul", "good");
        assertThat(good.stderr()).isEmpty();
        assertThat(good.stdout()).isEqualTo("0\n");
        assertThat(good.status()).isZero();
    }

    @Test
    void aColumnWalkTheOuterLoopMovesAlongItsRowsIsCheckedAsRows() throws Exception {
        String matmul = function("matmul");
        // b[k][j] (stride 512, 16 bytes a vector iteration over j) leaves the dot product and the j loop as B's
        // rows, [b[k][0], b[k][M]) each: one check with the rows bit (1 << 10), before the outer loop
        String rows = "\tmovabsq\t$" + (512L << 16 | 1L << 10 | 16) + ", %rdx\n";
        assertThat(matmul.split(java.util.regex.Pattern.quote(rows), -1)).hasSize(2);
        java.util.regex.Matcher firstLoop = java.util.regex.Pattern.compile("\n\\.Lmtp\\d+:").matcher(matmul);
        assertThat(firstLoop.find()).isTrue();
        assertThat(matmul.indexOf(rows)).isLessThan(firstLoop.start());
        assertThat(rangeChecks(matmul)).isEqualTo(3);
        CheckBuilds.Run bad = CheckBuilds.run(dir, Map.of(), "./vector", "matmul_b", "bad");
        assertThat(bad.stderr()).matches("memtrace: heap overflow: <calloc0003@main\\+\\d+>\\+32760 \\(a block of 32760 bytes, "
                + "allocated at vector.c:" + CheckBuilds.line(source, "NEST_ALLOC_B") + "\\) read 16 bytes by the loop, "
                + "0 bytes past its end, at vector.c:" + CheckBuilds.line(source, "MATMUL") + " \\(matmul\\+\\d+\\), thread \\d+\n");
        assertThat(bad.status()).isEqualTo(1);
        CheckBuilds.Run good = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK", "summary"), "./vector", "matmul_b", "good");
        assertThat(good.stdout()).isEqualTo("0\n");
        assertThat(good.stderr()).matches("memtrace: check summary: .* 0 errors\n");
        assertThat(good.status()).isZero();
    }
}
