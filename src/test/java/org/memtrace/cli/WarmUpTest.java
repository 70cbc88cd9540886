package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The warm-up's guess of {@code memtrace run}'s mode from its arguments (WarmUp.guess): the same choice as
 * RunCommand.defaultMode wherever the arguments alone decide, and the program's own arguments never read.
 */
class WarmUpTest {
    private static WarmUp.Guess guess(String... args) {
        return WarmUp.guess(List.of(args));
    }

    @Test
    void rewriteModeByDefaultAndWithOmega() {
        assertThat(guess("--", "/bin/true")).isEqualTo(new WarmUp.Guess(false, false));
        assertThat(guess("-q", "-o", "/dev/null", "/bin/true")).isEqualTo(new WarmUp.Guess(false, false));
        assertThat(guess("--omega", "0.5", "--regions", "heap", "--", "./p")).isEqualTo(new WarmUp.Guess(false, false));
        assertThat(guess("--check", "--mode", "rewrite", "./p")).isEqualTo(new WarmUp.Guess(false, true));
        assertThat(guess("--check", "./p")).isEqualTo(new WarmUp.Guess(false, true)); // run --check's default since issue 23
        assertThat(guess("--mode=rewrite", "--buffer-mb=8", "./p")).isEqualTo(new WarmUp.Guess(false, false));
    }

    @Test
    void faultModeWhenAskedOrImplied() {
        assertThat(guess("--mode", "fault", "--", "./p")).isEqualTo(new WarmUp.Guess(true, false));
        assertThat(guess("--mode=fault", "./p")).isEqualTo(new WarmUp.Guess(true, false));
        assertThat(guess("--check", "--mode", "fault", "./p")).isEqualTo(new WarmUp.Guess(true, true));
        assertThat(guess("--check", "--regions", "heap", "./p")).isEqualTo(new WarmUp.Guess(true, true));
        assertThat(guess("--regions", "heap", "./p")).isEqualTo(new WarmUp.Guess(true, false));
        assertThat(guess("--buffer-mb=16", "./p")).isEqualTo(new WarmUp.Guess(true, false));
    }

    @Test
    void theProgramsArgumentsAreNotRead() {
        assertThat(guess("-o", "--check", "./p", "--mode", "fault")).isEqualTo(new WarmUp.Guess(false, false));
        assertThat(guess("--", "./p", "--check")).isEqualTo(new WarmUp.Guess(false, false));
        assertThat(guess("./p", "--regions", "heap")).isEqualTo(new WarmUp.Guess(false, false));
    }
}
