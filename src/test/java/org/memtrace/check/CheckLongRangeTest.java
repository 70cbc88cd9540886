package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The runtime's quick shadow test over long ranges (check.h, mc_shadow_clean: eight granules a word, any length)
 * and fgets' copy of what the stream's buffer holds (check_io.c): ranges.c's memcpy, memset, a 77-byte struct
 * store and fgets one byte past a block, or into a freed one, built {@code memtrace cc --check} at -O0 and -O2,
 * are reported exactly as the exact walk reported them; the twins (the same ranges ending at the block's end, a
 * 9,000-character line over several refills of the stream's buffer) are silent and print what plain gcc's build
 * prints.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckLongRangeTest {
    static final List<String> BUILDS = List.of("ranges-O0", "ranges-O2");
    Path dir;
    Path source;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "ranges.c");
        CheckBuilds.build(dir, false, true, "-O0", "-g", "-o", "ranges-O0", "ranges.c");
        CheckBuilds.build(dir, false, true, "-O2", "-g", "-o", "ranges-O2", "ranges.c");
        CheckBuilds.tool(dir, "gcc", "-O0", "-g", "-o", "ranges-plain", "ranges.c");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "memcpy_long  | heap overflow: <malloc0001@F+N>+200 (a block of 200 bytes, allocated at ranges.c:{MEMCPY_ALLOC}) written 200 bytes by memcpy, 0 bytes past its end, at ranges.c:{MEMCPY} (F+N)",
        "memset_freed | use after free: <freed:0001@F+N>+0 (a block of 100 bytes, allocated at ranges.c:{FREED_ALLOC}, freed at ranges.c:{FREED_FREE}) written 100 bytes by memset, at ranges.c:{FREED} (F+N)",
        "memset_long  | heap overflow: <malloc0001@F+N>+1000 (a block of 1000 bytes, allocated at ranges.c:{MEMSET_ALLOC}) written 1001 bytes by memset, 0 bytes past its end, at ranges.c:{MEMSET} (F+N)",
        "odd_size     | heap overflow: <malloc0001@F+N>+76 (a block of 76 bytes, allocated at ranges.c:{ODD_ALLOC}) written 77 bytes, 0 bytes past its end, at ranges.c:{ODD} (F+N)",
        "fgets_long   | heap overflow: <malloc0003@F+N>+9001 (a block of 9001 bytes, allocated at ranges.c:{FGETS_ALLOC}) written 9002 bytes by fgets, 0 bytes past its end, at ranges.c:{FGETS} (F+N)",
    })
    void aLongRangeOneBytePastItsBlockIsReported(String name, String report) throws Exception {
        for (String b : BUILDS) {
            // at -O2 the case is inlined into main: the site's function is either
            String function = "\\E(" + name + "|main)\\Q";
            String want = "memtrace: " + CheckBuilds.reportPattern(source, report).replace("F+", function + "+") + ", thread \\d+";
            CheckBuilds.Run r = CheckBuilds.run(dir, Map.of(), "./" + b, name, "bad");
            assertThat(r.status()).as(b + " " + r.stderr()).isEqualTo(1);
            List<String> lines = r.stderr().lines().toList();
            assertThat(lines.getFirst()).as(b).matches(want);
            // -O2 inlines the case into main: the report lists the inlined frames of the site and the allocation
            if (b.equals("ranges-O0")) assertThat(lines).hasSize(1);
            else assertThat(lines).hasSize(name.equals("memset_freed") ? 9 : 6).contains("  allocated at:").anyMatch(l -> l.endsWith(" in " + name + " (inlined)"));
        }
    }

    @Test
    void theTwinsAreSilentWithThePlainOutput() throws Exception {
        CheckBuilds.Run plain = CheckBuilds.run(dir, Map.of(), "./ranges-plain", "all", "good");
        assertThat(plain.stdout()).contains("27003 3 c").endsWith("done\n");
        for (String b : BUILDS) {
            CheckBuilds.Run r = CheckBuilds.run(dir, Map.of(), "./" + b, "all", "good");
            assertThat(r.stderr()).as(b).isEmpty();
            assertThat(r.stdout()).as(b).isEqualTo(plain.stdout());
            assertThat(r.status()).as(b).isZero();
        }
    }
}
