package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Gcc;

/**
 * The summary counts the inline checks that ran, exactly, though the rewriter counts a run of them at once at its
 * first (CheckRewriter.runs): a check that stops the program takes the checks of its run that never ran back off
 * (the {@code nopl} mark after its slow call, check_shadow.c).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckCountTest {
    private static final Pattern SUMMARY = Pattern.compile("memtrace: check summary: (\\d+) accesses checked by (\\d+) checks "
            + "\\(0 loop entries, 0 block ranges, (\\d+) libc calls\\); statically 0 of 3 checks removed .*; (\\d+) errors?");
    Path dir;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        CheckBuilds.fixture(dir, "run_count.c");
        CheckBuilds.build(dir, false, true, "-O2", "-g", "-o", "run_count", "run_count.c");
    }

    /** Inline checks the summary counted: its checks less its libc calls (each access one check). */
    private long inline(String mode, String index, int errors) throws Exception {
        CheckBuilds.Run r = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK", mode), "./run_count", index);
        Matcher m = SUMMARY.matcher(r.stderr().lines().reduce((a, b) -> b).orElse(""));
        assertThat(m.matches()).as(r.stderr()).isTrue();
        assertThat(m.group(1)).isEqualTo(m.group(2));
        assertThat(Integer.parseInt(m.group(4))).isEqualTo(errors);
        return Long.parseLong(m.group(2)) - Long.parseLong(m.group(3));
    }

    @Test
    void aRunIsCountedOnceAndAStopUncountsWhatItsRunDidNotReach() throws Exception {
        String code = Gcc.run(List.of("objdump", "-d", "--no-show-raw-insn", dir.resolve("run_count").toString()));
        assertThat(code).as("a[i] and b[j]: one run of two, counted at once").contains("addq   $0x2,%fs:(%rcx)")
                .contains("nopl   0x6d740001(%rax)");
        assertThat(inline("summary", "15", 0)).isEqualTo(3);
        assertThat(inline("summary", "16", 1)).as("stopped at a[16]: b[j] never checked").isEqualTo(2);
        assertThat(inline("continue", "16", 1)).isEqualTo(3);
    }
}
