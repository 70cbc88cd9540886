package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/** memtrace run's progress line: what it says, how it is drawn apart from the program's output, and silence off a terminal. */
class RunProgressTest {
    private static final long SECOND = 1_000_000_000L;
    @TempDir static Path dir;

    @BeforeAll
    static void build() throws Exception {
        Gcc.compile(dir, "slow_lines.c", "slow_lines", "-g");
    }

    private static RunProgress.Sample running(long ns, long events, long trace) {
        return new RunProgress.Sample(ns, false, events, trace, 0, 0, 0, 0);
    }

    @Test
    void whileTheProgramRunsTheTimeEventsRateAndTraceBytes() {
        assertThat(RunProgress.line(running(SECOND / 2, 0, 0))).isEqualTo("memtrace: run 0:00, 0 events");
        assertThat(RunProgress.line(running(75 * SECOND, 12_345_678, 1_234_567_890)))
                .isEqualTo("memtrace: run 1:15, 12,345,678 events (164,609/s), trace 1.2 GB");
        assertThat(RunProgress.line(new RunProgress.Sample(3_725 * SECOND, true, 999, 999, 0, 0, 0, 0)))
                .isEqualTo("memtrace: run 1:02:05, program ended, 999 events (0/s), trace 999 bytes");
    }

    @Test
    void aMemtraceCcProgramShowsItsRecordingThenTheShareReadAndTheTimeLeft() {
        assertThat(RunProgress.line(new RunProgress.Sample(10 * SECOND, false, 0, 0, 52_400_000, 0, 0, 0)))
                .isEqualTo("memtrace: run 0:10, recording 52.4 MB (5.2 MB/s)");
        // a quarter read in 20 s: a minute left
        assertThat(RunProgress.line(new RunProgress.Sample(30 * SECOND, true, 1_000_000, 4_500, 0, 250, 1000, 20 * SECOND)))
                .isEqualTo("memtrace: run 0:30, reading the recording  25% (1,000,000 events, 1:00 left), trace 4.5 kB");
        // no guess in the first second
        assertThat(RunProgress.line(new RunProgress.Sample(30 * SECOND, true, 10, 0, 0, 250, 1000, SECOND / 2)))
                .isEqualTo("memtrace: run 0:30, reading the recording  25% (10 events)");
    }

    @Test
    void bytesInDecimalUnits() {
        assertThat(List.of(0L, 999L, 1000L, 1_500L, 999_949L, 999_960L, 21_400_000L, 3_000_000_000L, 5_000_000_000_000_000L))
                .extracting(RunProgress::bytes)
                .containsExactly("0 bytes", "999 bytes", "1.0 kB", "1.5 kB", "999.9 kB", "1.0 MB", "21.4 MB", "3.0 GB", "5000.0 TB");
    }

    @Test
    void theLineHoldsTheBottomRowAndTheRestScrolls() {
        StringWriter w = new StringWriter();
        StatusLine line = new StatusLine(new PrintWriter(w));
        line.show("memtrace: run 0:01, 5 events", new Terminal.Size(24, 100));
        // down and up (scrolls a cursor on the bottom row), region rows 1-23 with the cursor kept, then the line
        assertThat(w.toString()).isEqualTo("\033D\033M\0337\033[1;23r\0338" + "\0337\033[24;1H\033[2Kmemtrace: run 0:01, 5 events\0338");
        w.getBuffer().setLength(0);
        line.show("memtrace: run 0:02, 7 events", new Terminal.Size(24, 100));
        assertThat(w.toString()).isEqualTo("\0337\033[24;1H\033[2Kmemtrace: run 0:02, 7 events\0338");
        w.getBuffer().setLength(0);
        // the terminal grew: the old row is cleared, the region set anew; the text is cut to the columns less one
        line.show("memtrace: run 0:03, 9 events", new Terminal.Size(30, 20));
        assertThat(w.toString()).isEqualTo("\0337\033[24;1H\033[2K\0338" + "\033D\033M\0337\033[1;29r\0338"
                + "\0337\033[30;1H\033[2Kmemtrace: run 0:03,\0338");
        w.getBuffer().setLength(0);
        line.clear();
        assertThat(w.toString()).isEqualTo("\0337\033[30;1H\033[2K\0338\0337\033[r\0338");
        w.getBuffer().setLength(0);
        line.clear();
        line.show("x", new Terminal.Size(2, 80));
        line.show("x", null);
        assertThat(w.toString()).isEmpty();
    }

    @Test
    void offATerminalNothingIsDrawn() throws Exception {
        var r = Cli.run(dir, "run", "--mode", "fault", "-o", dir.resolve("t.trace").toString(), "--", dir.resolve("slow_lines").toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo("line 0\nline 1\nline 2\n");
        assertThat(r.stderr()).doesNotContain("\033", "\r", "memtrace: run ")
                .startsWith("err half done 0\nerr half done 1\nerr half done 2\n");
    }

    /**
     * Under a pseudo-terminal (script(1)) of 24 rows: the line is drawn, and taking out every piece memtrace drew
     * (each saved and restored the cursor) leaves the program's output whole, its half-written lines included.
     */
    @Test
    void onATerminalTheLineNeverSplitsTheProgramsOutput() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/script")), "script(1) from util-linux");
        String command = Cli.command("run", "--mode", "fault", "-q", "-o", dir.resolve("tty.trace").toString(), "--", dir.resolve("slow_lines").toString())
                .stream().map(a -> "'" + a + "'").collect(Collectors.joining(" "));
        Path out = dir.resolve("tty.out");
        Process p = new ProcessBuilder("script", "-qec", "stty rows 24 cols 100; exec " + command, "/dev/null").directory(dir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile())).redirectOutput(out.toFile())
                .redirectErrorStream(true).start();
        assertThat(p.waitFor(120, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        String tty = Files.readString(out);
        assertThat(tty).contains("\033D\033M\0337\033[1;23r\0338", "\0337\033[24;1H\033[2Kmemtrace: run 0:0")
                .endsWith("\0337\033[24;1H\033[2K\0338\0337\033[r\0338");
        String program = tty.replaceAll("\033D\033M", "").replaceAll("\0337[^\033]*(\033\\[[0-9;]*[A-Za-z][^\033]*)*\0338", "");
        assertThat(program).isEqualTo("line 0\r\nerr half done 0\r\nline 1\r\nerr half done 1\r\nline 2\r\nerr half done 2\r\n");
    }
}
