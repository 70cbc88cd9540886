package org.memtrace.launch;

/** memtrace cannot start or trace the program; the message is one line for the user. */
public final class LaunchException extends Exception {
    private final boolean usage;

    private LaunchException(String message, boolean usage, Throwable cause) {
        super(message, cause);
        this.usage = usage;
    }

    /** The command line names something that cannot be traced (exit status 2). */
    public static LaunchException usage(String message) { return new LaunchException(message, true, null); }

    /** The environment stops memtrace (exit status 1). */
    public static LaunchException environment(String message, Throwable cause) { return new LaunchException(message, false, cause); }

    public boolean usage() { return usage; }
}
