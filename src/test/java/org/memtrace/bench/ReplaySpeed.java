package org.memtrace.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import org.memtrace.event.Event;
import org.memtrace.mtr.MtrFile;
import org.memtrace.mtr.MtrFormatException;
import org.memtrace.mtr.MtrReader;

/**
 * Measures replay alone (bench/skeleton.sh): reads a {@code .mtr} file with every access, recorded or
 * computed, going to a consumer that only counts them and sums their addresses, so no event object, name or
 * text is made for an access. Prints one line per pass: accesses, of them computed, seconds and millions of
 * accesses per second by the wall clock (what a reader waits: the reader decodes chunks on two threads of its own),
 * and the CPU seconds of the whole process (both threads, the JIT's and the collector's too). Later passes
 * show the speed once the JIT has compiled the reader. Each line also splits the pass at its first access:
 * {@code fixed} is the wall time before it (mapping the file, the FFM API's and libzstd's set-up, the
 * modules' site tables, the first chunk's decoding), {@code rest} the accesses per second after it, so that a
 * small trace's rate is not its fixed cost divided by a few accesses.
 *
 * <p>A measurement tool, not part of the product jar: it lives with the tests and runs from the test classes.
 * Usage: {@code java --enable-native-access=ALL-UNNAMED -cp target/memtrace.jar:target/test-classes
 * org.memtrace.bench.ReplaySpeed FILE [passes [seconds]]}: at least {@code passes} passes (3), and more until
 * {@code seconds} (0) have gone by, so that a small trace is read often enough for the JIT to have compiled
 * the reader.
 */
public final class ReplaySpeed {
    private ReplaySpeed() {
    }

    /** Counts and sums; the sum is printed so that the JIT cannot drop the work. */
    private static final class Counter implements MtrReader.Accesses {
        long count, sum, first;

        @Override
        public void access(int tid, long address, Event.ProbeSite site) {
            if (count++ == 0) first = System.nanoTime();
            sum += address;
        }
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 1 || args.length > 3) {
            System.err.println("usage: ReplaySpeed FILE.mtr [passes [seconds]]");
            System.exit(2);
        }
        int passes = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        double seconds = args.length > 2 ? Double.parseDouble(args[2]) : 0;
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long began = System.nanoTime();
        for (int p = 0; p < passes || System.nanoTime() - began < seconds * 1e9; p++) {
            Counter counter = new Counter();
            long start = System.nanoTime(), cpuStart = os.getProcessCpuTime();
            MtrReader.Result r;
            try (MtrFile file = MtrFile.open(Path.of(args[0]))) {
                r = MtrReader.read(file, e -> { }, counter);
            } catch (MtrFormatException e) {
                System.err.println("memtrace: " + args[0] + ": " + e.getMessage());
                System.exit(1);
                return;
            }
            long end = System.nanoTime();
            double wall = (end - start) / 1e9, cpu = (os.getProcessCpuTime() - cpuStart) / 1e9;
            long first = counter.count > 0 ? counter.first : end;
            System.out.printf("pass %d: %d accesses, %d computed, %.4f s, %.1f M accesses/s, process cpu %.4f s (sum %x), fixed %.2f ms, rest %.1f M/s%s%n",
                    p + 1, counter.count, r.skeleton().computed(), wall, counter.count / wall / 1e6, cpu, counter.sum,
                    (first - start) / 1e6, Math.max(0, counter.count - 1) / Math.max(1e-9, (end - first) / 1e9) / 1e6,
                    r.problems().isEmpty() ? "" : " problems: " + String.join("; ", r.problems()));
        }
    }
}
