import java.io.OutputStream;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;

/**
 * Runs one memtrace command in this JVM and prints the CPU seconds of the thread that ran it next to the
 * process's (the JIT's threads included) and the wall time. On a shared machine the main thread's CPU time
 * is the figure least disturbed by other jobs, and on an idle 2-core machine it bounds the wall time: the
 * stream's reader, the Parquet page writer and the JIT run on the other core. Used by bench/offline-cpu.sh.
 */
public class MainThreadCpu {
    public static void main(String[] args) {
        var threads = ManagementFactory.getThreadMXBean();
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long process = os.getProcessCpuTime(), thread = threads.getCurrentThreadCpuTime(), wall = System.nanoTime();
        int status = org.memtrace.cli.Main.execute(new PrintWriter(OutputStream.nullOutputStream()), new PrintWriter(System.err, true), args);
        System.out.printf("status %d, main thread %.2f s CPU, process %.2f s CPU, wall %.2f s%n", status,
                (threads.getCurrentThreadCpuTime() - thread) / 1e9, (os.getProcessCpuTime() - process) / 1e9,
                (System.nanoTime() - wall) / 1e9);
    }
}
