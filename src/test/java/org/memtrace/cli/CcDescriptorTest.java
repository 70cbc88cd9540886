package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TracedRun;

/**
 * Issue 26: the cc runtime wrote its trace on descriptor 900. A program that closed every descriptor and
 * opened 1000 files found trace chunks in the file it got on 900 (and the trace lost them); one that closed
 * 0-1023 with raw system calls left a 64-byte trace. Now the program's files hold only what it wrote and the
 * trace holds every store, however the program clears its descriptors (docs/compiled-in.md, "The trace's
 * descriptor").
 */
class CcDescriptorTest {
    @TempDir static Path dir;

    @BeforeAll
    static void build() throws Exception {
        Files.copy(CcDescriptorTest.class.getResourceAsStream("/c/cc_descriptors.c"), dir.resolve("fds.c"));
        var command = new ArrayList<>(Cli.command("cc", "-O0", "-o", dir.resolve("fds").toString(), dir.resolve("fds.c").toString()));
        Gcc.run(command);
    }

    @ParameterizedTest
    @ValueSource(strings = {"close", "raw", "range", "from", "dup2"})
    void theProgramsFilesHoldOnlyItsOwnBytesAndTheTraceEveryStore(String how) throws Exception {
        Path mtr = dir.resolve(how + ".mtr");
        // small buffers: chunks are written all the while the program's 1000 files are open
        TracedRun run = TracedRun.run(dir, List.of(dir.resolve("fds").toString(), how), mtr, 16);
        assertThat(run.status()).as("every file holds only its own line: " + run.stdout()).isZero();
        var printed = Cli.run(dir, "print", "-o", how + ".trace", mtr.toString());
        assertThat(printed.status()).as(printed.stderr()).isZero();
        try (Stream<String> lines = Files.lines(dir.resolve(how + ".trace"))) {
            long sink = lines.filter(l -> l.startsWith("S$") && l.substring(l.indexOf(':') + 1).startsWith("sink+")).count();
            assertThat(sink).as("the stores to sink, two loops of 1000 * 256").isEqualTo(2 * 1000 * 256);
        }
        assertThat(Files.readAllLines(dir.resolve(how + ".trace")).getLast()).startsWith("# exit status=0 ");
    }
}
