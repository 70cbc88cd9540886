package org.memtrace.launch;

import java.time.Duration;
import java.time.Instant;

/**
 * Where {@code memtrace run}'s own time goes before and after the program (docs/madt.md, "Start-up"):
 * with MEMTRACE_TIMING set in the environment, each checkpoint prints one line on stderr: milliseconds
 * since the JVM process was created (the kernel counts that in 10 ms ticks) and since the checkpoint
 * before (exact). Without the variable a checkpoint costs one static boolean read, so they stay in the
 * code to keep the breakdown measurable.
 */
public final class Checkpoints {
    private static final boolean ON = System.getenv("MEMTRACE_TIMING") != null;
    private static long previous;

    private Checkpoints() {}

    public static synchronized void mark(String what) {
        if (!ON) return;
        long now = System.nanoTime();
        double sinceStart = ProcessHandle.current().info().startInstant()
                .map(s -> Duration.between(s, Instant.now()).toNanos() / 1e6).orElse(Double.NaN);
        double step = previous == 0 ? 0 : (now - previous) / 1e6;
        previous = now;
        System.err.printf("memtrace: timing %7.1f ms (+%6.1f) %s%n", sinceStart, step, what);
    }
}
