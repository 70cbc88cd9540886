package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Correct code in shapes that once made {@code memtrace cc --check} report (src/test/resources/c/check/twins_silent.c,
 * found by bench/check-itc-fp.sh and real programs' test suites): silent at -O0 and -O2, with the plain build's
 * output and status.
 */
class CheckTwinsSilentTest {

    @ParameterizedTest
    @ValueSource(strings = {"-O0", "-O2"})
    void correctCodeIsSilent(String level, @TempDir Path dir) throws Exception {
        CheckBuilds.fixture(dir, "twins_silent.c");
        CheckBuilds.build(dir, false, true, level, "-g", "-o", "twins", "twins_silent.c");
        CheckBuilds.Run r = CheckBuilds.run(dir, Map.of(), "./twins");
        assertThat(r.stderr()).as(level).isEmpty();
        assertThat(r.status()).isZero();
        // 5, 7 and 9 are odd: each adds 1 (no options decoded) and 257 (the offset decoded)
        assertThat(r.stdout()).isEqualTo("scope_pair 774\n");
    }
}
