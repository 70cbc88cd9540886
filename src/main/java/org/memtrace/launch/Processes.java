package org.memtrace.launch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** What both ways of running a program (agent or compiled-in) need around the child process. */
final class Processes {
    private Processes() {}

    /** memtrace only ends after the program, so an interrupt is kept for later rather than obeyed. */
    static int waitUninterruptibly(Process p) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return p.waitFor();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }

    /**
     * How long memtrace, once stopped (SIGINT/SIGTERM), goes on taking in what the program recorded before it
     * ended (the program itself is ended within {@link #stop}'s 0.6 s): the ring holds at most its capacity,
     * which a reader keeping up drains in well under a second, so this bound only bites a reader that fell
     * far behind (a loaded machine, a slow analysis). What is not read by then is left out and the trace
     * says it is incomplete. A fixed 0.3 s lost the whole ring on a loaded two-core machine.
     */
    static final long STOP_BUDGET_NS = 3_000_000_000L;

    /**
     * As {@link #STOP_BUDGET_NS} for a compiled-in run, whose trace is read only once the program has ended:
     * counted from then, and longer, since loading the reader's classes comes out of it.
     */
    static final long REPLAY_BUDGET_NS = 450_000_000L;

    /**
     * Ends the program from outside (memtrace got SIGINT/SIGTERM): gives it a moment to end on its own
     * (Ctrl-C reached it too), then terminates it, then kills it; under a second in all, since the user is
     * waiting for the prompt.
     */
    static void stop(Process p) {
        try {
            if (!p.waitFor(300, TimeUnit.MILLISECONDS)) {
                p.destroy();
                if (!p.waitFor(300, TimeUnit.MILLISECONDS)) p.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A leftover memtrace-* ring or trace in a temporary directory is harmless: no error for it. */
    static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException ignored) {
            // see above
        }
    }
}
