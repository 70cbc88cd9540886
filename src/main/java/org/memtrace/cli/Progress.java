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
        if (total > 0) err.printf(Locale.ROOT, "\rmemtrace: %s %3d%% (%,d events)", what, done * 100 / total, events);
        else err.printf(Locale.ROOT, "\rmemtrace: %s (%,d events)", what, events);
        err.flush();
        printed = true;
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
