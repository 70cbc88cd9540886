package org.memtrace.bench;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.memtrace.analysis.Analysis;
import org.memtrace.analysis.Ending;
import org.memtrace.analysis.Interpretation;
import org.memtrace.analysis.Summary;
import org.memtrace.event.Event;
import org.memtrace.heap.SymbolicNaming;
import org.memtrace.madt.AddressMode;
import org.memtrace.madt.MadtWriter;
import org.memtrace.mtr.MtrFile;
import org.memtrace.mtr.MtrFormatException;
import org.memtrace.mtr.MtrReader;
import org.memtrace.trace.InstructionShapes;

/**
 * The JVM side of {@code memtrace run} on a program that records itself (memtrace cc, {@code --mode rewrite}),
 * alone and split by stage: a {@code .mtr} file (a run's {@code --save-stream}) read into the stage
 * {@code RunCommand} builds, with some of its parts: {@code read} the reader alone (a counting consumer),
 * {@code stage} the interpretation with no analysis, {@code summary} with the summary only, {@code text}
 * with the MadT writer only (to {@code /dev/null}), {@code all} both as a run has them (the text to OUT, or
 * {@code /dev/null}). Prints the reading thread's CPU time per event and the process's CPU time, per pass.
 *
 * <p>A measurement tool (issue 27), from the test classes: {@code java --enable-native-access=ALL-UNNAMED
 * -XX:+UseSerialGC [-XX:TieredStopAtLevel=1] -cp target/memtrace.jar:target/test-classes
 * org.memtrace.bench.RunReplay FILE.mtr PARTS [passes [OUT]]}.
 */
public final class RunReplay {
    private RunReplay() {
    }

    private static final class Counter implements MtrReader.Accesses {
        long count, sum;

        @Override
        public void access(int tid, long address, Event.ProbeSite site) {
            count++;
            sum += address;
        }
    }

    public static void main(String[] args) throws IOException, MtrFormatException {
        if (args.length < 2 || args.length > 4) {
            System.err.println("usage: RunReplay FILE.mtr read|stage|summary|text|all [passes [OUT]]");
            System.exit(2);
        }
        Path file = Path.of(args[0]);
        String parts = args[1];
        int passes = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        Path outPath = args.length > 3 ? Path.of(args[3]) : Path.of("/dev/null");
        var threads = ManagementFactory.getThreadMXBean();
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        for (int p = 0; p < passes; p++) {
            long cpu0 = threads.getCurrentThreadCpuTime(), proc0 = os.getProcessCpuTime(), wall0 = System.nanoTime();
            long events;
            try (MtrFile mtr = MtrFile.open(file)) {
                if (parts.equals("read")) {
                    Counter c = new Counter();
                    long[] others = {0};
                    MtrReader.read(mtr, e -> others[0]++, c);
                    events = c.count + others[0];
                } else {
                    SymbolicNaming names = new SymbolicNaming();
                    List<Analysis> analyses = new ArrayList<>();
                    OutputStream out = parts.equals("text") || parts.equals("all")
                            ? Files.newOutputStream(outPath) : OutputStream.nullOutputStream();
                    if (parts.equals("text") || parts.equals("all"))
                        analyses.add(new MadtWriter(out, AddressMode.SYMBOLIC, names, System.err::println));
                    if (parts.equals("summary") || parts.equals("all"))
                        analyses.add(new Summary(true).printTo(p == 0 ? new PrintWriter(System.out) : null));
                    Interpretation stage = new Interpretation(names, InstructionShapes.UNKNOWN, analyses);
                    MtrReader.Result r = MtrReader.read(mtr, stage::accept, stage::probe);
                    stage.finish(new Ending(stage.records(), stage.events(), r.dropped(), null, 0, "", java.util.Map.of(), null));
                    events = stage.records();
                }
            }
            long cpu = threads.getCurrentThreadCpuTime() - cpu0, proc = os.getProcessCpuTime() - proc0, wall = System.nanoTime() - wall0;
            System.out.printf("pass %d %s: %d events, reading thread %.3f s cpu = %.1f ns/event; process %.3f s cpu; wall %.3f s%n",
                    p + 1, parts, events, cpu / 1e9, (double) cpu / events, proc / 1e9, wall / 1e9);
        }
    }
}
