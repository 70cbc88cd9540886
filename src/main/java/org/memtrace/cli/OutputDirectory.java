package org.memtrace.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.memtrace.io.IoReason;
import org.memtrace.launch.LaunchException;

/**
 * A command's output that is a directory of files (a partitioned Parquet dataset): built under a temporary
 * name beside its real one ({@code .OUT.XXXX.partial}) and renamed once complete, so a failed or interrupted
 * job never leaves a directory that looks finished. The real name must not exist: memtrace never writes into
 * or replaces a directory it did not make. Every subdirectory and file is created new
 * ({@code O_EXCL|O_NOFOLLOW}), with the permissions of what the user writes (0755 and 0644).
 */
final class OutputDirectory implements AutoCloseable {
    private final Path target;
    private final Path temporary;
    private boolean committed;

    private OutputDirectory(Path target, Path temporary) {
        this.target = target;
        this.temporary = temporary;
    }

    /**
     * Refuses {@code -}, an existing name and any of {@code inputs}, then creates the temporary directory;
     * {@code what} names the output in those refusals ("a partitioned dataset").
     */
    static OutputDirectory create(Path target, List<Path> inputs, String what) throws LaunchException {
        if (OutputFile.isStandardOutput(target))
            throw LaunchException.usage(what + " is a directory: name one with -o, not standard output");
        OutputFile.refuseDestructive(target, inputs, "");
        Path absolute = target.toAbsolutePath();
        if (Files.exists(absolute, LinkOption.NOFOLLOW_LINKS))
            throw LaunchException.usage("cannot write " + target + ": it exists; " + what + " is written to a new directory");
        try {
            Path temporary = Files.createTempDirectory(absolute.getParent(), "." + absolute.getFileName() + ".");
            Path partial = temporary.resolveSibling(temporary.getFileName() + ".partial");
            Files.move(temporary, partial, StandardCopyOption.ATOMIC_MOVE);
            Files.setPosixFilePermissions(partial, PosixFilePermissions.fromString("rwxr-xr-x"));
            partial.toFile().deleteOnExit();   // with what is below it, deleted first (reverse order)
            return new OutputDirectory(absolute, partial);
        } catch (IOException | RuntimeException e) {
            throw LaunchException.usage("cannot write " + target + ": " + IoReason.of(e));
        }
    }

    /** Creates {@code relative} (a file, with its subdirectories) in the directory being built. */
    OutputStream create(String relative) throws IOException {
        Path file = temporary.resolve(relative).normalize();
        if (!file.startsWith(temporary)) throw new IOException("a dataset file outside its directory: " + relative);
        Path parent = file.getParent();
        if (!Files.isDirectory(parent, LinkOption.NOFOLLOW_LINKS)) {
            Files.createDirectories(parent);
            parent.toFile().deleteOnExit();
        }
        OutputStream out = Files.newOutputStream(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        file.toFile().deleteOnExit();
        return out;
    }

    /** The dataset is complete: give the directory its name (refused if someone made that name meanwhile). */
    void commit() throws IOException {
        // rename(2) would replace an empty directory made under that name meanwhile: look first
        if (Files.exists(target, LinkOption.NOFOLLOW_LINKS))
            throw new IOException(target + " appeared while the dataset was written; it is left in " + temporary);
        try {
            Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (FileAlreadyExistsException e) {
            throw new IOException(target + " appeared while the dataset was written; it is left in " + temporary);
        }
        committed = true;
    }

    /** Removes what an unfinished job made. */
    @Override
    public void close() {
        if (committed) return;
        try (Stream<Path> walk = Files.walk(temporary)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        } catch (IOException e) {
            // nothing more to do: the name says it is partial
        }
    }
}
