package org.memtrace.instrument;

import org.junit.jupiter.api.Test;
import org.memtrace.select.ScoreTriplet;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CcOptionsTest {

    @Test
    void defaultsAreFullTracingWithStackInLogMode() {
        CcOptions o = CcOptions.parse(List.of());
        assertThat(o).isEqualTo(CcOptions.DEFAULTS);
        assertThat(o.omega()).isEqualTo(1.0);
        assertThat(o.selective()).isFalse();
        assertThat(o.chunk()).isEqualTo(4096);
        assertThat(o.stack()).isTrue();
        assertThat(o.mode()).isEqualTo(CcOptions.Mode.LOG);
        assertThat(o.keepAsm()).isEmpty();
    }

    @Test
    void parsesEveryOptionInBothSpellings() {
        CcOptions o = CcOptions.parse(List.of("--omega", "0.25", "--chunk=64", "--scores", "1,3,5", "--no-stack",
                "--mode", "aia", "--keep-asm", "out/asm"));
        assertThat(o).isEqualTo(new CcOptions(0.25, 64, new ScoreTriplet(1, 3, 5), false, CcOptions.Mode.AIA,
                Optional.of(Path.of("out/asm"))));
        assertThat(o.selective()).isTrue();
    }

    @Test
    void keepAsmRefusesAnOptionAsItsDirectory() {
        assertThatThrownBy(() -> CcOptions.split(List.of("--keep-asm", "-O2", "x.c")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("option --keep-asm needs a directory, not the option '-O2' "
                        + "(write --keep-asm=./-O2 for such a name)");
        assertThat(CcOptions.split(List.of("--keep-asm=-O2", "x.c")).options().keepAsm())
                .contains(Path.of("-O2"));
    }

    @Test
    void skeletonNeedsEveryAccessSoItRefusesASelection() {
        CcOptions.Split s = CcOptions.split(List.of("--skeleton", "-O2", "x.c"));
        assertThat(s.options().skeleton()).isTrue();
        assertThat(s.optionWords()).containsExactly("--skeleton");
        assertThat(CcOptions.fromEnvironment("--skeleton").skeleton()).isTrue();
        assertThat(CcOptions.DEFAULTS.skeleton()).isFalse();
        assertThatThrownBy(() -> CcOptions.parse(List.of("--skeleton", "--omega", "0.5")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--skeleton needs --omega 1");
        assertThatThrownBy(() -> CcOptions.parse(List.of("--omega", "0.5", "--skeleton")))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void splitStopsAtTheFirstGccArgumentOrAfterDoubleDash() {
        CcOptions.Split s = CcOptions.split(List.of("--omega", "0.5", "-O2", "--mode", "ma", "x.c"));
        assertThat(s.options().omega()).isEqualTo(0.5);
        assertThat(s.optionWords()).containsExactly("--omega", "0.5");
        assertThat(s.rest()).containsExactly("-O2", "--mode", "ma", "x.c");

        CcOptions.Split d = CcOptions.split(List.of("--no-stack", "--", "--omega", "x.c"));
        assertThat(d.options().stack()).isFalse();
        assertThat(d.optionWords()).containsExactly("--no-stack");
        assertThat(d.rest()).containsExactly("--omega", "x.c");
    }

    @Test
    void environmentWordsAreWhitespaceSeparated() {
        assertThat(CcOptions.fromEnvironment("  --omega 0.75\t--mode ma ").mode()).isEqualTo(CcOptions.Mode.MA);
        assertThat(CcOptions.fromEnvironment(null)).isEqualTo(CcOptions.DEFAULTS);
        assertThat(CcOptions.fromEnvironment("")).isEqualTo(CcOptions.DEFAULTS);
    }

    @Test
    void badValuesGiveOneLineMessages() {
        assertThatThrownBy(() -> CcOptions.parse(List.of("--omega", "2"))).hasMessage("bad --omega 2: omega must be in [0,1]");
        assertThatThrownBy(() -> CcOptions.parse(List.of("--omega", "x"))).hasMessage("bad --omega 'x': expected a number in [0,1]");
        assertThatThrownBy(() -> CcOptions.parse(List.of("--chunk", "0"))).hasMessage("bad --chunk 0: the chunk size must be positive");
        assertThatThrownBy(() -> CcOptions.parse(List.of("--scores", "1,2"))).hasMessage("bad --scores '1,2': expected three integers s1,s2,s3");
        assertThatThrownBy(() -> CcOptions.parse(List.of("--scores", "3,2,1"))).hasMessageStartingWith("bad --scores '3,2,1': scores 3,2,1 must satisfy");
        assertThatThrownBy(() -> CcOptions.parse(List.of("--mode", "fast"))).hasMessage("bad --mode 'fast': expected log, ma or aia");
        assertThatThrownBy(() -> CcOptions.parse(List.of("--omega"))).hasMessage("option --omega needs a value");
        assertThatThrownBy(() -> CcOptions.parse(List.of("-O2"))).hasMessage("unknown memtrace cc option '-O2'");
    }
}
