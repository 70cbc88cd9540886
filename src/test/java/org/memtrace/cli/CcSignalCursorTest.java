package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * Which register a program's signal handler (or a fatal signal) takes as the interrupted code's cursor:
 * only the one the code at the interrupted pc says holds it (a loop's, read from the executable's site
 * table and probes, agent/runtime/rt_ccarm.c; a probe's in its window, rt_probe.c), never one that merely
 * points past the cursor in the thread's buffer. sig_stale.c faults, outside any probe, with such a
 * pointer in %rdx, %r11 and %rcx, as a dead register a probe left its cursor in does once the buffer has
 * been reused. When the runtime guessed, the handler's records went after a stretch of stale slots: 4,489
 * records no site table describes and 179,581 records of data[] for 128,000 (print exit 1); a crash
 * there flushed 46 records of site 0, or earlier rounds' accesses again. Under rewrite mode the same
 * program built by gcc gave 148,419 accesses for 128,000 and 65,119 records of site 0.
 */
class CcSignalCursorTest {
    @TempDir static Path dir;
    static Path prog;

    @BeforeAll
    static void build() throws Exception {
        Path source = dir.resolve("sig_stale.c");
        try (InputStream in = CcSignalCursorTest.class.getResourceAsStream("/c/sig_stale.c")) {
            Files.copy(in, source);
        }
        prog = dir.resolve("stale");
        List<String> cc = new ArrayList<>(Cli.command("cc"));
        cc.addAll(List.of("-O2", "-g", "-no-pie", "-o", prog.toString(), source.toString()));
        Gcc.run(cc);
    }

    /** What one run recorded: bytes of data[] accessed, stores to handled, the program's line and status. */
    private record Counts(long data, long handledStores, String stdout, int status) {
    }

    private static Counts run(String name, long rounds, String how) throws Exception {
        Path mtr = dir.resolve(name + ".mtr"), text = dir.resolve(name + ".trace");
        ProcessBuilder pb = new ProcessBuilder(prog.toString(), "" + rounds, how);
        pb.environment().putAll(Map.of("MEMTRACE_OUT", mtr.toString(), "MEMTRACE_BUFFER_KB", "16"));
        pb.redirectError(ProcessBuilder.Redirect.DISCARD);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes()).strip();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        Cli.Result printed = Cli.run(dir, "print", "-q", "-o", text.toString(), mtr.toString());
        assertThat(printed.status()).as(name + ": " + printed.stderr()).isZero();
        assertThat(printed.stderr()).as(name).isEmpty();
        return counted(text, out, p.exitValue());
    }

    private static Counts counted(Path text, String out, int status) throws Exception {
        long data = 0, handled = 0;
        for (String l : Files.readAllLines(text)) {
            if (!l.startsWith("L") && !l.startsWith("S")) continue;
            String[] f = l.split(",");
            String var = f[0].substring(f[0].indexOf(':') + 1);
            if (var.startsWith("data[")) data += Long.parseLong(f[3]);
            if (var.startsWith("handled") && l.startsWith("S")) handled++;
        }
        Files.delete(text);
        return new Counts(data, handled, out, status);
    }

    @Test
    void aHandlerOutsideEveryProbeRecordsAtTheCursorWhateverRegistersPointPastIt() throws Exception {
        long rounds = 2000;
        Counts plain = run("plain", rounds, "plain");
        Counts fault = run("fault", rounds, "fault");
        assertThat(plain.stdout()).isEqualTo(rounds + " 0");
        assertThat(fault.stdout()).as("the handler ran once a round").isEqualTo(rounds + " " + rounds);
        assertThat(plain.data()).as("data[] read and written whole a round").isEqualTo(2 * 8 * 64 * rounds);
        assertThat(fault.data()).as("the same accesses as the run without signals").isEqualTo(plain.data());
        assertThat(fault.handledStores()).as("the handler's store, once a fault").isEqualTo(rounds);
    }

    @Test
    void aCrashOutsideEveryProbeWritesTheBufferUpToTheCursorOnly() throws Exception {
        for (long rounds : new long[] {1, 101, 102}) {
            Counts crash = run("crash" + rounds, rounds, "crash");
            assertThat(crash.status()).as("killed by SIGSEGV").isEqualTo(128 + 11);
            assertThat(crash.stdout()).isEqualTo(rounds + " 0");
            assertThat(crash.data()).as("%d rounds: every access to data[] once", rounds).isEqualTo(2 * 8 * 64 * rounds);
        }
    }

    /** Rewrite mode's trampolines share the runtime, and its guess broke their traces the same way. */
    @Test
    void rewriteModeTakesNoRegisterOutsideItsTrampolinesEither() throws Exception {
        Path plain = Gcc.compile(dir, "sig_stale.c", "stale-plain", "-O2", "-g", "-no-pie");
        long rounds = 2000;
        var counts = new ArrayList<Counts>();
        for (String how : List.of("plain", "fault")) {
            Path text = dir.resolve("rewrite-" + how + ".trace");
            Cli.Result r = Cli.run(dir, "run", "--mode", "rewrite", "-q", "-o", text.toString(), "--", plain.toString(), "" + rounds, how);
            assertThat(r.status()).as(r.stderr()).isZero();
            assertThat(r.stderr()).as(how).isEmpty();
            counts.add(counted(text, r.stdout().strip(), r.status()));
        }
        assertThat(counts.get(1).stdout()).isEqualTo(rounds + " " + rounds);
        assertThat(counts.get(0).data()).isEqualTo(2 * 8 * 64 * rounds);
        assertThat(counts.get(1).data()).as("the same accesses as the run without signals").isEqualTo(counts.get(0).data());
        assertThat(counts.get(1).handledStores()).as("the handler's store, once a fault").isEqualTo(rounds);
    }

    /**
     * A program that single-steps its own malloc and free (sig_step.c: the trap flag and a SIGTRAP handler
     * with a traced store) steps through the runtime's wrappers too, also inside rt_emit_seq's window,
     * where a handler's records would be overwritten: there the steps go on unseen (rt_signal.c,
     * in_emit_window). Before, the window deferred the trap with SIGTRAP blocked and the next step killed
     * the program (status 133); armed for access stacks, where SIGTRAP is the runtime's, it looped on.
     */
    @ParameterizedTest(name = "armed {0}")
    @ValueSource(booleans = {false, true})
    void aProgramSteppingThroughTheRuntimeRecordsEveryStepOnce(boolean armed) throws Exception {
        Path source = dir.resolve("sig_step.c");
        if (!Files.exists(source)) {
            try (InputStream in = CcSignalCursorTest.class.getResourceAsStream("/c/sig_step.c")) {
                Files.copy(in, source);
            }
        }
        Path step = dir.resolve("step");
        if (!Files.exists(step)) {
            List<String> cc = new ArrayList<>(Cli.command("cc"));
            cc.addAll(List.of("-O2", "-g", "-no-pie", "-o", step.toString(), source.toString()));
            Gcc.run(cc);
        }
        Path mtr = dir.resolve("step-" + armed + ".mtr"), text = dir.resolve("step-" + armed + ".trace");
        ProcessBuilder pb = new ProcessBuilder(step.toString(), "4");
        pb.environment().putAll(Map.of("MEMTRACE_OUT", mtr.toString(), "STEPS", "1"));
        if (armed) pb.environment().put("MEMTRACE_ACCESS_STACKS", "1");
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes()).strip();
        String err = new String(p.getErrorStream().readAllBytes()).strip();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(err).isZero();
        assertThat(out).as("each stepped call counted steps").isEqualTo("4 1");
        assertThat(err).startsWith("steps ");
        long steps = Long.parseLong(err.substring(6));
        Cli.Result printed = Cli.run(dir, "print", "-q", "-o", text.toString(), mtr.toString());
        assertThat(printed.status()).as(printed.stderr()).isZero();
        long stores = 0, allocations = 0;
        for (String l : Files.readAllLines(text)) {
            if (l.startsWith("S") && l.contains(":steps+0,")) stores++;
            if (l.startsWith("M") && l.contains("@stepped+")) allocations++;
        }
        assertThat(stores).as("the handler's store, once a step").isEqualTo(steps);
        assertThat(allocations).as("the stepped mallocs").isEqualTo(4);
    }
}
