package org.memtrace.cli;

import static org.assertj.core.api.Assertions.*;

import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * Signals that arrive while an instruction's page is open for its out-of-line step wait until the step is
 * over (the agent no longer blocks them for each step): the program's handler, touching the same page,
 * is seen every time it runs, and the loop it interrupts loses no access.
 */
class SignalsMidStepTest {
    @TempDir Path dir;

    @Test
    void everyHandlerRunIsTracedAndTheLoopLosesNoAccess() throws Exception {
        Gcc.compile(dir, "signals_mid_step.c", "signals_mid_step", "-g", "-no-pie");
        Path trace = dir.resolve("mid.trace");
        var r = Cli.run(dir, "run", "--mode", "fault", "--addresses", "symbolic", "-o", trace.toString(), "--",
                dir.resolve("signals_mid_step").toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        Matcher m = Pattern.compile("sum (\\d+) ticks (\\d+)").matcher(r.stdout());
        assertThat(m.find()).as(r.stdout()).isTrue();
        assertThat(m.group(1)).isEqualTo("4439040"); // 16 rounds adding i to table[i], summed after each add
        long ticks = Long.parseLong(m.group(2));
        assertThat(ticks).as("the timer fired during the loop").isPositive();

        TraceFile t = TraceFile.read(trace);
        // page.ticks (page+2048, named down to the field with -g): one load and one store per handler run, the
        // last load by printf's argument
        long tickStores = t.of('S').stream().filter(l -> l.field(0).equals("page.ticks+0")).count();
        long tickLoads = t.of('L').stream().filter(l -> l.field(0).equals("page.ticks+0")).count();
        assertThat(tickStores).isEqualTo(ticks);
        assertThat(tickLoads).isEqualTo(ticks + 1);
        // the loop: table[i] loaded twice and stored once per iteration, 16 x 256 iterations
        long tableStores = t.of('S').stream().filter(l -> l.field(0).startsWith("page.table[")).count();
        long tableLoads = t.of('L').stream().filter(l -> l.field(0).startsWith("page.table[")).count();
        assertThat(tableStores).isEqualTo(16 * 256);
        assertThat(tableLoads).isEqualTo(2 * 16 * 256);
    }
}
