package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * A program killed by SIGKILL records no end (nothing of it runs): its trace must say it is incomplete, in the
 * text trace's last line and the summary. Rewrite mode's runtime writes its buffers only at the
 * end, so there the trace held nothing and still read as whole, naming every plan "not applied".
 */
class KilledProgramTest {
    @TempDir static Path dir;
    static Path program;

    @BeforeAll
    static void build() throws Exception {
        program = Gcc.compile(dir, "killed_self.c", "killed_self", "-g");
    }

    @Test
    void aProgramKilledBySigkillInRewriteModeLeavesATraceMarkedIncomplete() throws Exception {
        Path trace = dir.resolve("rewrite.trace");
        Cli.Result r = Cli.run(dir, "run", "--mode", "rewrite", "-o", trace.toString(), "--", program.toString(), "9");
        assertThat(r.status()).as(r.stderr()).isEqualTo(137);
        String mark = "the program was killed by SIGKILL before it could record its end: the trace ends there or earlier";
        assertThat(r.stderr()).contains("the program was killed by SIGKILL (signal 9)", "the trace is incomplete: " + mark)
                .doesNotContain("its plan was not applied");
        List<String> lines = Files.readAllLines(trace);
        TraceFile.parse(lines);
        assertThat(lines.getLast()).isEqualTo("# incomplete " + mark);
    }

    /** A raw exit system call (seccomp's strict mode allows no other) skips the runtime's end: status 1, marked. */
    @Test
    void aProgramLeavingByARawExitInRewriteModeLeavesATraceMarkedIncomplete() throws Exception {
        Path trace = dir.resolve("exit.trace");
        Cli.Result r = Cli.run(dir, "run", "--mode", "rewrite", "-o", trace.toString(), "--", program.toString(), "exit");
        assertThat(r.status()).as(r.stderr()).isEqualTo(1);
        String mark = "the program ended without recording its end (a raw exit system call, its runtime could not finish, or its trace could not be written): "
                + "the trace ends there or earlier";
        assertThat(r.stderr()).contains("the program exited with status 0", "the trace is incomplete: " + mark)
                .doesNotContain("its plan was not applied");
        List<String> lines = Files.readAllLines(trace);
        TraceFile.parse(lines);
        assertThat(lines.getLast()).isEqualTo("# incomplete " + mark);
    }

    /** Fault mode's agent sees the kill(2) a program sends itself and records it: that trace is whole. */
    @Test
    void aProgramKillingItselfInFaultModeRecordsItsEnd() throws Exception {
        Path trace = dir.resolve("fault.trace");
        Cli.Result r = Cli.run(dir, "run", "--mode", "fault", "-o", trace.toString(), "--", program.toString(), "9");
        assertThat(r.status()).as(r.stderr()).isEqualTo(137);
        assertThat(r.stderr()).doesNotContain("incomplete");
        List<String> lines = Files.readAllLines(trace);
        TraceFile.parse(lines);
        assertThat(lines.getLast()).startsWith("# fatal signal 9 (SIGKILL)");
    }
}
