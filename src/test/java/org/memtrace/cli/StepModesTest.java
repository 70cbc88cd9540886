package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * The agent's stepping routes (docs/madt.md, "How an instruction runs"): MEMTRACE_STEP=trap forces the
 * trap-flag route that memtrace falls back to without libZydis, and must record what the default
 * out-of-line route records, except the one thing it cannot see (a rep string instruction's stores to the
 * page its loads opened). Any other value is the default (the former "open" route was removed).
 */
class StepModesTest {
    @TempDir static Path dir;
    static Path prog;

    @BeforeAll
    static void build() throws Exception {
        prog = Gcc.compile(dir, "step_modes.c", "step_modes", "-O1", "-g", "-no-pie", "-fno-builtin");
    }

    /**
     * The trace's numbered lines under MEMTRACE_STEP={@code step} (unset when null), without their sequence
     * numbers and with the program's thread id written as TID, so that two runs compare line by line.
     */
    private static List<String> trace(String step) throws Exception {
        Path out = Files.createTempFile(dir, "trace", ".txt");
        ProcessBuilder pb = new ProcessBuilder(Cli.command("run", "--mode", "fault", "-q", "-o", out.toString(), "--", prog.toString()))
                .directory(dir.toFile()).redirectErrorStream(true);
        pb.environment().remove("MEMTRACE_STEP");
        if (step != null) pb.environment().put("MEMTRACE_STEP", step);
        Process p = pb.start();
        String said = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(said).isZero();
        List<String> lines = Files.readAllLines(out);
        String pid = lines.getFirst().replaceAll("^# agent pid=(\\d+) .*", "$1");
        assertThat(pid).as("first line %s", lines.getFirst()).matches("\\d+");
        return lines.stream().filter(l -> !l.startsWith("#"))
                .map(l -> l.replaceFirst("^(.)\\$\\d+:", "$1:").replaceAll("," + pid + "(,|$)", ",TID$1")).toList();
    }

    @Test
    void theTrapRouteRecordsWhatTheDefaultDoesButTheStoresOfARepCopyWithinOnePage() throws Exception {
        List<String> outOfLine = trace(null);
        List<String> trap = trace("trap");
        // the program's own accesses, as the default records them: 64 + 32 stores, a load per element of the
        // rep movsb and its 256 stores to dst (src and dst share a page of .bss)
        assertThat(outOfLine).filteredOn(l -> l.startsWith("S:table[")).hasSize(64 + 1);
        assertThat(outOfLine).filteredOn(l -> l.startsWith("L:src[")).hasSize(256);
        assertThat(outOfLine).filteredOn(l -> l.startsWith("S:dst[")).hasSize(256);
        assertThat(outOfLine).anyMatch(l -> l.startsWith("M:<malloc0001@main+"));
        // the trap flag steps the copy with the page open: its first fault (a load) is all it sees per element
        assertThat(trap).isEqualTo(outOfLine.stream().filter(l -> !l.startsWith("S:dst[")).toList());
    }

    @Test
    void anyOtherValueIsTheDefaultRoute() throws Exception {
        assertThat(trace("open")).isEqualTo(trace(null));
    }
}
