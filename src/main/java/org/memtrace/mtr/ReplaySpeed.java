package org.memtrace.mtr;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import org.memtrace.event.Event;

/**
 * Measures replay alone (bench/skeleton.sh): reads a {@code .mtr} file with every access, recorded or
 * computed, going to a consumer that only counts them and sums their addresses, so no event object, name or
 * text is made for an access. Prints one line per pass: accesses, of them computed, seconds, millions of
 * accesses per second, by the wall clock and by the thread's CPU time (on a shared machine the second is the
 * steadier). Later passes show the speed once the JIT has compiled the reader.
 *
 * <p>Usage: {@code java --enable-native-access=ALL-UNNAMED -cp memtrace.jar org.memtrace.mtr.ReplaySpeed FILE [passes]}
 */
public final class ReplaySpeed {
    private ReplaySpeed() {
    }

    /** Counts and sums; the sum is printed so that the JIT cannot drop the work. */
    private static final class Counter implements MtrReader.Accesses {
        long count, sum;

        @Override
        public void access(int tid, long address, Event.ProbeSite site) {
            count++;
            sum += address;
        }
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 1 || args.length > 2) {
            System.err.println("usage: ReplaySpeed FILE.mtr [passes]");
            System.exit(2);
        }
        int passes = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
        for (int p = 0; p < passes; p++) {
            Counter counter = new Counter();
            long start = System.nanoTime(), cpuStart = cpu.getCurrentThreadCpuTime();
            MtrReader.Result r;
            try (MtrFile file = MtrFile.open(Path.of(args[0]))) {
                r = MtrReader.read(file, e -> { }, counter);
            } catch (MtrFormatException e) {
                System.err.println("memtrace: " + args[0] + ": " + e.getMessage());
                System.exit(1);
                return;
            }
            double seconds = (System.nanoTime() - start) / 1e9, cpuSeconds = (cpu.getCurrentThreadCpuTime() - cpuStart) / 1e9;
            System.out.printf("pass %d: %d accesses, %d computed, %.3f s, %.1f M accesses/s, cpu %.3f s, %.1f M accesses/cpu-s (sum %x)%s%n",
                    p + 1, counter.count, r.skeleton().computed(), seconds, counter.count / seconds / 1e6, cpuSeconds,
                    counter.count / cpuSeconds / 1e6, counter.sum,
                    r.problems().isEmpty() ? "" : " problems: " + String.join("; ", r.problems()));
        }
    }
}
