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

    /** Why a file could not be created, in a few words rather than the exception's bare path. */
    public static String reason(Exception e) {
        return switch (e) {
            case java.nio.file.AccessDeniedException a -> "permission denied";
            case java.nio.file.NoSuchFileException n -> "no such directory";
            case java.nio.file.FileSystemException f when f.getReason() != null -> f.getReason();
            default -> String.valueOf(e.getMessage());
        };
    }
}
