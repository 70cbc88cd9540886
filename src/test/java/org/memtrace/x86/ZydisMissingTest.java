package org.memtrace.x86;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ZydisMissingTest {
    @Test
    void aMissingLibraryIsOneActionableLine() {
        assertThatThrownBy(() -> Zydis.load("libZydis.so.99.0"))
                .isInstanceOf(ZydisUnavailableException.class)
                .hasMessage("memtrace: libzydis4.0 not found: apt-get install libzydis4.0")
                .satisfies(e -> org.assertj.core.api.Assertions.assertThat(e.getStackTrace()).isEmpty());
    }
}
