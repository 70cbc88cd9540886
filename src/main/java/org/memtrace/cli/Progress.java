package org.memtrace.cli;

import java.io.Console;
import java.io.PrintWriter;
import java.util.Locale;

/**
 * A one-line progress display for long offline jobs, shown only when memtrace talks to a terminal: piped or
 * redirected output stays free of it. Cheap to call per record or per batch: it looks at the clock once per
 * 64 Ki events.
 */
final class Progress {
    private static final long INTERVAL_NS = 250_000_000L;
    private final PrintWriter err;
    private final String what;
    private final boolean shown;
    /** {@code events / 64 Ki} when the clock was last looked at. */
    private long looked, lastShown;
    private final long started = System.nanoTime();
    private boolean printed;

    private Progress(PrintWriter err, String what, boolean shown) {
        this.err = err;
        this.what = what;
        this.shown = shown;
        this.lastShown = System.nanoTime();
    }

    /** Shown when the console is an interactive terminal. */
    static Progress onTerminal(PrintWriter err, String what) {
        Console c = System.console();
        return new Progress(err, what, c != null && c.isTerminal());
    }

    static Progress none() { return new Progress(null, "", false); }

    /** {@code done} of {@code total} bytes of input read, after {@code events} events. */
    void update(long done, long total, long events) {
        if (!shown || events >>> 16 == looked) return;
        looked = events >>> 16;
        long now = System.nanoTime();
        if (now - lastShown < INTERVAL_NS) return;
        lastShown = now;
        err.print("\r" + line(what, done, total, events, now - started) + "\033[K");
        err.flush();
        printed = true;
    }

    /**
     * The progress line: with a total, the share done and the time left at the pace so far (once a second has
     * passed and something is done: earlier guesses swing too much to help).
     */
    static String line(String what, long done, long total, long events, long elapsedNs) {
        if (total <= 0) return String.format(Locale.ROOT, "memtrace: %s (%,d events)", what, events);
        String s = String.format(Locale.ROOT, "memtrace: %s %3d%% (%,d events", what, done * 100 / total, events);
        if (done > 0 && elapsedNs >= 1_000_000_000L) {
            long left = (long) ((double) elapsedNs * (total - done) / done / 1e9 + 0.5);
            s += String.format(Locale.ROOT, ", %d:%02d left", left / 60, left % 60);
        }
        return s + ")";
    }

    /** Shows what a step without progress of its own is doing, until {@link #end}. */
    void note(String message) {
        if (!shown) return;
        err.print("\rmemtrace: " + what + ": " + message + "\033[K");
        err.flush();
        printed = true;
    }

    /** Clears the line, so that what follows starts on a clean one. */
    void end() {
        if (!printed) return;
        err.print("\r\033[K");
        err.flush();
        printed = false;
    }
}
