package org.memtrace.launch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

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

    /** A leftover memtrace-* ring or trace in a temporary directory is harmless: no error for it. */
    static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException ignored) {
            // see above
        }
    }
}
