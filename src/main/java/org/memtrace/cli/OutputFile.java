package org.memtrace.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import org.memtrace.launch.LaunchException;

/**
 * An output written under a temporary name in the same directory and renamed to its real name only once
 * complete, so that a failed or interrupted job never leaves a file that looks finished.
 */
final class OutputFile implements AutoCloseable {
    private final Path target;
    private final Path temporary;
    private boolean committed;

    private OutputFile(Path target, Path temporary) {
        this.target = target;
        this.temporary = temporary;
    }

    /** Creates the temporary file now, so an unwritable place fails before any work. */
    static OutputFile create(Path target) throws LaunchException {
        Path absolute = target.toAbsolutePath();
        if (Files.isDirectory(absolute)) throw LaunchException.usage("cannot write " + target + ": it is a directory");
        try {
            Path temporary = Files.createTempFile(absolute.getParent(), "." + absolute.getFileName() + ".", ".partial");
            // The final file gets the permissions of any file the user writes, not a temporary file's 0600.
            Files.setPosixFilePermissions(temporary, PosixFilePermissions.fromString("rw-r--r--"));
            // An interrupted job (Ctrl-C runs the JVM's exit hooks) does not leave the partial file behind.
            temporary.toFile().deleteOnExit();
            return new OutputFile(absolute, temporary);
        } catch (IOException | RuntimeException e) {
            throw LaunchException.usage("cannot write " + target + ": " + LaunchException.reason(e));
        }
    }

    /** Where to write; the name is not the final one. */
    Path temporary() { return temporary; }

    /** The output is complete: give it its name. */
    void commit() throws IOException {
        Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        committed = true;
    }

    @Override
    public void close() {
        if (committed) return;
        try {
            Files.deleteIfExists(temporary);
        } catch (IOException e) {
            // nothing more to do: the name says it is partial
        }
    }
}
