package org.memtrace.launch;

import java.time.Duration;
import java.time.Instant;

/**
 * Where {@code memtrace run}'s own time goes before and after the program (docs/madt.md, "Start-up"):
 * with MEMTRACE_TIMING set in the environment, each checkpoint prints one line on stderr: milliseconds
 * since the JVM process was created (the kernel counts that in 10 ms ticks) and since the checkpoint
 * before (exact), and the JVM's CPU time so far (user + system of its threads, in 10 ms ticks). Without the variable a checkpoint costs one static boolean read, so they stay in the
 * code to keep the breakdown measurable.
 */
public final class Checkpoints {
    private static final boolean ON = System.getenv("MEMTRACE_TIMING") != null;
    private static long previous;

    private Checkpoints() {}

    /** The JVM's CPU time so far (user + system, all its threads), in ms: /proc/self/stat's clock ticks; -1 unknown. */
    private static long cpuMillis() {
        try {
            String stat = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/self/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10; // utime, stime: fields 14, 15 at USER_HZ 100
        } catch (java.io.IOException | RuntimeException e) {
            return -1;
        }
    }

    public static synchronized void mark(String what) {
        if (!ON) return;
        long now = System.nanoTime();
        double sinceStart = ProcessHandle.current().info().startInstant()
                .map(s -> Duration.between(s, Instant.now()).toNanos() / 1e6).orElse(Double.NaN);
        double step = previous == 0 ? 0 : (now - previous) / 1e6;
        previous = now;
        System.err.printf("memtrace: timing %7.1f ms (+%6.1f) cpu %5d ms %s%n", sinceStart, step, cpuMillis(), what);
    }
}
