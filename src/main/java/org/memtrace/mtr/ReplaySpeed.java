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
 * steadier). Later passes show the speed once the JIT has compiled the reader. Each line also splits the
 * pass's CPU time at its first access: {@code fixed} is what came before it (mapping the file, the FFM API's
 * and libzstd's set-up, the modules' site tables, the first chunk's decoding), {@code rest} the accesses per
 * CPU-second after it, so that a small trace's rate is not its fixed cost divided by a few accesses.
 *
 * <p>Usage: {@code java --enable-native-access=ALL-UNNAMED -cp memtrace.jar org.memtrace.mtr.ReplaySpeed FILE [passes]}
 */
public final class ReplaySpeed {
    private ReplaySpeed() {
    }

    /** Counts and sums; the sum is printed so that the JIT cannot drop the work. */
    private static final class Counter implements MtrReader.Accesses {
        private final ThreadMXBean cpu;
        long count, sum, firstCpu;

        Counter(ThreadMXBean cpu) { this.cpu = cpu; }

        @Override
        public void access(int tid, long address, Event.ProbeSite site) {
            if (count++ == 0) firstCpu = cpu.getCurrentThreadCpuTime();
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
            Counter counter = new Counter(cpu);
            long start = System.nanoTime(), cpuStart = cpu.getCurrentThreadCpuTime();
            MtrReader.Result r;
            try (MtrFile file = MtrFile.open(Path.of(args[0]))) {
                r = MtrReader.read(file, e -> { }, counter);
            } catch (MtrFormatException e) {
                System.err.println("memtrace: " + args[0] + ": " + e.getMessage());
                System.exit(1);
                return;
            }
            long cpuEnd = cpu.getCurrentThreadCpuTime();
            double seconds = (System.nanoTime() - start) / 1e9, cpuSeconds = (cpuEnd - cpuStart) / 1e9;
            long first = counter.count > 0 ? counter.firstCpu : cpuEnd;
            System.out.printf("pass %d: %d accesses, %d computed, %.3f s, %.1f M accesses/s, cpu %.3f s, %.1f M accesses/cpu-s (sum %x), fixed %.1f ms, rest %.1f M/cpu-s%s%n",
                    p + 1, counter.count, r.skeleton().computed(), seconds, counter.count / seconds / 1e6, cpuSeconds,
                    counter.count / cpuSeconds / 1e6, counter.sum, (first - cpuStart) / 1e6,
                    Math.max(0, counter.count - 1) / Math.max(1e-9, (cpuEnd - first) / 1e9) / 1e6,
                    r.problems().isEmpty() ? "" : " problems: " + String.join("; ", r.problems()));
        }
    }
}
