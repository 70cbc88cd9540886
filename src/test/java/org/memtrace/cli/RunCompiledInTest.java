package org.memtrace.cli;

import static org.assertj.core.api.Assertions.*;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.launch.InstrumentedRun;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * memtrace run on a program built like memtrace cc builds them (the selftrace.c fixture writes its own .mtr
 * file where MEMTRACE_OUT says, as the runtime would): no agent, the file read back through the same
 * writer and summary, the program's status passed on.
 */
class RunCompiledInTest {
    @TempDir Path dir;

    record Outcome(int status, String err) {}

    static Outcome memtrace(String... args) {
        var err = new StringWriter();
        int status = Main.execute(new PrintWriter(new StringWriter()), new PrintWriter(err), args);
        return new Outcome(status, err.toString());
    }

    @Test
    void aProgramWithASiteTableTracesItselfAndIsReadBack() throws Exception {
        Path prog = Gcc.compile(dir, "selftrace.c", "selftrace");
        assertThat(InstrumentedRun.isInstrumented(prog)).isTrue();
        assertThat(InstrumentedRun.isInstrumented(Path.of("/bin/true"))).isFalse();
        Path trace = dir.resolve("out.txt");
        Path kept = dir.resolve("kept.mtr");
        Outcome o = memtrace("run", "-o", trace.toString(), "--save-stream", kept.toString(), "--", prog.toString());
        assertThat(o.status()).as(o.err()).isEqualTo(3);
        List<String> lines = Files.readAllLines(trace);
        TraceFile.parse(lines);
        // Run-time addresses differ per run (PIE, thread ids): the names do not.
        List<String> names = lines.stream().filter(l -> !l.startsWith("# ")).map(l -> l.substring(0, l.lastIndexOf(','))).toList();
        assertThat(names).containsExactly(
                "M$0:<malloc0001@work+12>,32",
                "L$1:table+8,selftrace,work+5,4",
                "L$2:table+4,selftrace,work+5,4",
                "S$3:<malloc0001@work+12>+8,[heap],work+12,8",
                "F$4:<freed:0001@work+12>");
        assertThat(lines).anyMatch(l -> l.matches("# thread \\d+ start parent=\\d+")).contains("# exit status=3 tid=" + tidOf(lines.get(2)));
        assertThat(o.err()).containsPattern("loads\\s+2\\n").containsPattern("stores\\s+1\\n").containsPattern("threads\\s+2\\n")
                .containsPattern("probes\\s+3\\n").containsPattern("memory regions\\s+1\\n").doesNotContain("faults")
                .contains("memtrace: the program exited with status 3");

        // The kept .mtr prints the same trace.
        Path again = dir.resolve("again.txt");
        Outcome p = memtrace("print", "-q", "-o", again.toString(), kept.toString());
        assertThat(p.status()).as(p.err()).isZero();
        assertThat(Files.readAllLines(again)).isEqualTo(lines);
    }

    private static String tidOf(String allocationLine) {
        return allocationLine.substring(allocationLine.lastIndexOf(',') + 1);
    }
}
