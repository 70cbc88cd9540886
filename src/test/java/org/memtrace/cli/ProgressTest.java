package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The progress line: share done and the time left at the pace so far, when the input's size is known. */
class ProgressTest {
    private static final long SECOND = 1_000_000_000L;

    @Test
    void aKnownTotalShowsTheShareAndTheTimeLeft() {
        // a quarter in 30 s: 90 s left
        assertThat(Progress.line("convert to csv", 250, 1000, 1_234_567, 30 * SECOND))
                .isEqualTo("memtrace: convert to csv  25% (1,234,567 events, 1:30 left)");
        assertThat(Progress.line("report", 999, 1000, 10, 999 * SECOND)).isEqualTo("memtrace: report  99% (10 events, 0:01 left)");
    }

    @Test
    void noGuessBeforeASecondNorWithoutATotal() {
        assertThat(Progress.line("report", 500, 1000, 7, SECOND / 2)).isEqualTo("memtrace: report  50% (7 events)");
        assertThat(Progress.line("report", 0, 1000, 0, 5 * SECOND)).isEqualTo("memtrace: report   0% (0 events)");
        assertThat(Progress.line("cachesim", 0, 0, 65_536, 5 * SECOND)).isEqualTo("memtrace: cachesim (65,536 events)");
    }
}
