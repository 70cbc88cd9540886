package org.memtrace.cli;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import org.memtrace.launch.RunState;

/**
 * The progress line of {@code memtrace run}, on a terminal only (standard error is one, as isatty(2) says;
 * piped or redirected, nothing at all): a thread of its own samples the run four times a second from its
 * first second on and draws the line on the terminal's bottom row ({@link StatusLine}), away from the
 * program's output. It says only what is known: while the program runs, the time, the events interpreted
 * and their rate, the trace bytes written, or for a program built with memtrace cc (which records on its own
 * and is read once it has ended) the recording's bytes and their rate; while the finished recording is read,
 * the share read and the time left at that pace. A run's length cannot be known ahead, so it has no percentage.
 */
final class RunProgress implements AutoCloseable {
    private static final long SECOND = 1_000_000_000L;
    private static final long INTERVAL_NS = SECOND / 4;

    /** What the line shows at one moment: nanoseconds, counts and bytes, 0 where unknown. */
    record Sample(long elapsedNs, boolean programEnded, long events, long traceBytes, long recordingBytes,
                  long readDone, long readTotal, long readElapsedNs) {}

    private final Thread thread;
    private final StatusLine status;
    private volatile boolean closed;

    private RunProgress(Thread thread, StatusLine status) {
        this.thread = thread;
        this.status = status;
    }

    /**
     * Starts the line for a run whose state is {@code state}, whose events are counted by {@code events} and
     * whose trace bytes by {@code traceBytes}; nothing happens unless standard error is a terminal and
     * {@code wanted}.
     */
    static RunProgress start(boolean wanted, PrintWriter err, RunState state, LongSupplier events, LongSupplier traceBytes) {
        if (!wanted || !Terminal.isTerminal(2)) return new RunProgress(null, null);
        StatusLine status = new StatusLine(err);
        RunProgress[] self = new RunProgress[1];
        Thread t = Thread.ofPlatform().daemon().name("memtrace-progress").unstarted(() -> {
            long begun = System.nanoTime();
            LockSupport.parkNanos(SECOND);
            while (!self[0].closed) {
                long now = System.nanoTime();
                long started = state.programStarted();
                if (started != 0) {
                    long ended = state.programEnded();
                    long total = state.readTotal();
                    Sample s = new Sample(now - started, ended != 0, events.getAsLong(), traceBytes.getAsLong(), state.recordingBytes(),
                            state.readDone(), total, total > 0 ? now - state.readStarted() : 0);
                    synchronized (self[0]) {
                        if (!self[0].closed) status.show(line(s), Terminal.size(2));
                    }
                } else if (now - begun > 60 * SECOND) {
                    break;
                }
                LockSupport.parkNanos(INTERVAL_NS);
            }
        });
        self[0] = new RunProgress(t, status);
        t.start();
        return self[0];
    }

    /** The line for one sample. */
    static String line(Sample s) {
        StringBuilder b = new StringBuilder("memtrace: run ").append(clock(s.elapsedNs()));
        if (s.readTotal() > 0) {
            // the finished recording of a memtrace cc program, read: its share is known
            long pct = Math.min(100, s.readDone() * 100 / s.readTotal());
            b.append(String.format(Locale.ROOT, ", reading the recording %3d%% (%,d events", pct, s.events()));
            if (s.readDone() > 0 && s.readElapsedNs() >= SECOND && s.readDone() < s.readTotal()) {
                long left = (long) ((double) s.readElapsedNs() * (s.readTotal() - s.readDone()) / s.readDone() / SECOND + 0.5);
                b.append(", ").append(clock(left * SECOND)).append(" left");
            }
            b.append(')');
        } else if (s.events() == 0 && s.recordingBytes() > 0) {
            // a memtrace cc program writes its recording itself: its size is what can be known
            b.append(", recording ").append(bytes(s.recordingBytes()));
            appendRate(b, s.recordingBytes(), s.elapsedNs(), true);
        } else {
            if (s.programEnded()) b.append(", program ended");
            b.append(String.format(Locale.ROOT, ", %,d events", s.events()));
            appendRate(b, s.events(), s.elapsedNs(), false);
        }
        if (s.traceBytes() > 0) b.append(", trace ").append(bytes(s.traceBytes()));
        return b.toString();
    }

    private static void appendRate(StringBuilder b, long amount, long elapsedNs, boolean inBytes) {
        if (elapsedNs < SECOND || amount == 0) return;
        long perSecond = (long) (amount * (double) SECOND / elapsedNs);
        b.append(" (").append(inBytes ? bytes(perSecond) : String.format(Locale.ROOT, "%,d", perSecond)).append("/s)");
    }

    /** m:ss, or h:mm:ss from an hour on. */
    static String clock(long ns) {
        long s = ns / SECOND;
        return s >= 3600 ? String.format(Locale.ROOT, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
                : String.format(Locale.ROOT, "%d:%02d", s / 60, s % 60);
    }

    /** Bytes in decimal units, one decimal from a kilobyte on: 999 bytes, 1.5 kB, 21.4 MB, 3.0 GB. */
    static String bytes(long n) {
        if (n < 1000) return n + " bytes";
        String[] units = {"kB", "MB", "GB", "TB"};
        double v = n;
        int u = -1;
        while (v >= 999.95 && u < units.length - 1) {
            v /= 1000;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    /** Stops the sampling and clears the line, giving the terminal its whole screen back. */
    @Override
    public void close() {
        if (thread == null) return;
        synchronized (this) {
            closed = true;
            status.clear();
        }
        LockSupport.unpark(thread);
    }
}
