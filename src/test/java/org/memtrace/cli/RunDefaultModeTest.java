package org.memtrace.cli;

import static org.assertj.core.api.Assertions.*;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * {@code memtrace run} without {@code --mode} (docs/rewriting.md, "The default mode"): rewrite mode for an
 * unmodified dynamically linked program, fault mode where only it does what was asked ({@code --regions}) or
 * where the executable cannot be rewritten (one line says so), a memtrace cc program's own probes.
 */
class RunDefaultModeTest {
    @TempDir Path dir;

    /** The stores of global_array's loop: one per element of {@code table}, whichever mode recorded them. */
    private static long tableStores(Path trace) throws Exception {
        return TraceFile.read(trace).lines().stream().filter(l -> l.access() && l.type() == 'S' && l.field(0).startsWith("table+")).count();
    }

    @Test
    void anUnmodifiedProgramIsRewrittenWithoutBeingAsked() throws Exception {
        Path prog = Gcc.compile(dir, "global_array.c", "global_array", "-O0");
        Path trace = dir.resolve("default.trace");
        var r = Cli.run(dir, "run", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stderr()).containsPattern("memtrace: rewrite: [1-9]\\d* memory instructions of " + prog + " rewritten")
                .contains("int3 fallback").doesNotContain("cannot rewrite").doesNotContain("faults");
        assertThat(tableStores(trace)).isEqualTo(100);
    }

    @Test
    void regionsAreFaultModesAndChooseIt() throws Exception {
        Path prog = Gcc.compile(dir, "global_array.c", "global_array", "-O0");
        Path trace = dir.resolve("regions.trace");
        var r = Cli.run(dir, "run", "--regions", "data", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stderr()).doesNotContain("rewrite:").containsPattern("faults\\s+[1-9]");
        assertThat(tableStores(trace)).isEqualTo(100);
    }

    @Test
    void anExecutableRewriteModeRefusesGoesToFaultModeInOneLine() throws Exception {
        // its trampolines fit neither below its code nor above it within 2 GB (RewriteNonPieTest)
        Path prog = Gcc.compile(dir, "rewrite_huge_bss.c", "huge", "-O1", "-no-pie", "-mcmodel=medium", "-Wl,-Ttext-segment=0x10000");
        var r = Cli.run(dir, "run", "-q", "-o", dir.resolve("h.trace").toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo("3\n");
        assertThat(r.stderr()).isEqualTo("memtrace: cannot rewrite " + prog + " (" + prog
                + ": its trampolines (up to 1 MB) fit neither below its code nor above it within 2 GB); tracing it by page faults instead (--mode fault)\n");
        assertThat(TraceFile.read(dir.resolve("h.trace")).lines().stream().filter(l -> l.access() && l.type() == 'S'
                && l.field(0).startsWith("big+")).count()).isEqualTo(2);
    }

    @Test
    void aProgramBuiltWithMemtraceCcKeepsItsOwnProbes() throws Exception {
        Path prog = Gcc.compile(dir, "selftrace.c", "selftrace");
        var r = Cli.run(dir, "run", "-o", dir.resolve("cc.trace").toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isEqualTo(3);
        assertThat(r.stderr()).containsPattern("probes\\s+3\\n").doesNotContain("rewrite:").doesNotContain("faults");
    }
}
