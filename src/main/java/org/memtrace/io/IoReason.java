package org.memtrace.io;

/** Why a file could not be opened, created or written, in a few words rather than the exception's bare path. */
public final class IoReason {
    private IoReason() {}

    /** A file system exception's message is often only the file's name, which the caller already shows. */
    public static String of(Exception e) {
        return switch (e) {
            case java.nio.file.AccessDeniedException a -> "permission denied";
            case java.nio.file.NoSuchFileException n -> "no such directory";
            case java.nio.file.FileSystemException f when f.getReason() != null -> f.getReason();
            default -> String.valueOf(e.getMessage());
        };
    }
}
