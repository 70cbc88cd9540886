package org.memtrace.cli;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;
import org.memtrace.io.IoReason;
import org.memtrace.launch.FileHead;
import org.memtrace.launch.LaunchException;

/**
 * A command's output: standard output when it is named {@code -}, else a file written under a temporary name
 * in the same directory and renamed to its real name only once complete, so that a failed or interrupted job
 * never leaves a file that looks finished. Before anything is created it refuses a name that would destroy
 * data (docs/exit-status.md, "Outputs"): one of the command's inputs under any name (a symbolic or hard link:
 * compared by device and inode) or an existing ELF file (a program or library: {@code -o libfoo.so}).
 */
final class OutputFile implements AutoCloseable {
    /** The name that means standard output for every command that writes a file. */
    static final String STANDARD_OUTPUT = "-";

    /** The real name; null for standard output. */
    private final Path target;
    private final String shown;
    /** Where a file output is written; for standard output, a private file made only if a writer needs a path. */
    private Path temporary;
    /** The target is no regular file (a device such as /dev/null, a FIFO): written in place, never renamed over nor removed. */
    private final boolean direct;
    private boolean committed;
    /** Standard output once opened: it knows whether its pipe's reader has gone. */
    private StandardOutput standard;

    private OutputFile(Path target, String shown, Path temporary, boolean direct) {
        this.target = target;
        this.shown = shown;
        this.temporary = temporary;
        this.direct = direct;
    }

    static boolean isStandardOutput(Path p) { return p.toString().equals(STANDARD_OUTPUT); }

    /**
     * Checks {@code target} against {@code inputs} and creates the temporary file now, so an unwritable or
     * forbidden place fails before any work.
     */
    static OutputFile create(Path target, List<Path> inputs) throws LaunchException {
        if (isStandardOutput(target)) return new OutputFile(null, "standard output", null, false);
        refuseDestructive(target, inputs, "");
        Path absolute = target.toAbsolutePath();
        if (Files.isDirectory(absolute)) throw LaunchException.usage("cannot write " + target + ": it is a directory");
        // a rename would replace the device or FIFO itself (as root, /dev/full by a regular file)
        if (Files.exists(absolute) && !Files.isRegularFile(absolute)) return new OutputFile(absolute, target.toString(), absolute, true);
        try {
            Path temporary = Files.createTempFile(absolute.getParent(), "." + absolute.getFileName() + ".", ".partial");
            // The final file gets the permissions of any file the user writes, not a temporary file's 0600.
            Files.setPosixFilePermissions(temporary, PosixFilePermissions.fromString("rw-r--r--"));
            // An interrupted job (Ctrl-C runs the JVM's exit hooks) does not leave the partial file behind.
            temporary.toFile().deleteOnExit();
            return new OutputFile(absolute, target.toString(), temporary, false);
        } catch (IOException | RuntimeException e) {
            throw LaunchException.usage("cannot write " + target + ": " + IoReason.of(e));
        }
    }

    /**
     * Refuses an output {@code target} that is one of {@code inputs} or an existing ELF file; {@code option}
     * names the option in the message ("-o "), or is empty.
     */
    static void refuseDestructive(Path target, List<Path> inputs, String option) throws LaunchException {
        for (Path input : inputs)
            if (sameFile(target, input))
                throw LaunchException.usage(option + target + " is the input " + input + "; memtrace would destroy it: name another output");
        if (isElf(target))
            throw LaunchException.usage(option + target + " is an existing program or library (an ELF file); memtrace never overwrites one: name another output");
    }

    /** One file under two names (a link, a relative path), or one path for a file that does not exist yet. */
    static boolean sameFile(Path a, Path b) {
        try {
            if (Files.exists(a) && Files.exists(b)) return Files.isSameFile(a, b);
        } catch (IOException e) {
            // unreadable: compare the names below
        }
        return a.toAbsolutePath().normalize().equals(b.toAbsolutePath().normalize());
    }

    private static boolean isElf(Path file) {
        if (!Files.isRegularFile(file)) return false;
        try (FileChannel ch = FileChannel.open(file)) {
            return Arrays.equals(FileHead.of(ch, 4), new byte[] {0x7f, 'E', 'L', 'F'});
        } catch (IOException e) {
            return false; // unreadable: opening it for writing will say why
        }
    }

    /** How the output is named in messages: the path given, or "standard output". */
    String shown() { return shown; }

    boolean toStandardOutput() { return target == null; }

    /** A file output's temporary file (never standard output: the caller refused it). */
    Path file() {
        if (target == null) throw new IllegalStateException("standard output has no temporary file");
        return temporary;
    }

    /** Where a writer that needs a path writes; the name is not the final one. */
    Path temporary() throws IOException {
        if (temporary == null) {
            temporary = Files.createTempFile("memtrace-stdout.", ".partial"); // 0600, O_EXCL
            temporary.toFile().deleteOnExit();
        }
        return temporary;
    }

    /**
     * A stream to write the output to: standard output itself (never closed, its write errors thrown, unlike
     * {@code System.out}'s), or the temporary file.
     */
    OutputStream open() throws IOException {
        if (target == null) return standard();
        return Files.newOutputStream(temporary);
    }

    private StandardOutput standard() {
        if (standard == null) standard = new StandardOutput();
        return standard;
    }

    /**
     * Whether the output is a pipe whose reader has gone ({@code memtrace print t.mtr | head}): reading on would
     * be work for nobody, and the command ends as a C tool killed by SIGPIPE would ({@link TraceInput#READER_GONE}).
     */
    boolean readerGone() { return standard != null && standard.readerGone; }

    /** File descriptor 1 as a stream whose errors (a full disk, a closed pipe) are thrown; close only flushes. */
    static OutputStream standardOutput() { return new StandardOutput(); }

    private static final class StandardOutput extends FileOutputStream {
        /** A write failed with EPIPE: the reader closed its end. */
        private boolean readerGone;

        StandardOutput() { super(FileDescriptor.out); }

        @Override
        public void write(int b) throws IOException {
            try {
                super.write(b);
            } catch (IOException e) {
                throw noted(e);
            }
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            try {
                super.write(b, off, len);
            } catch (IOException e) {
                throw noted(e);
            }
        }

        private IOException noted(IOException e) {
            // the JDK gives EPIPE as this message and no other type
            if ("Broken pipe".equals(e.getMessage())) readerGone = true;
            return e;
        }

        @Override
        public void close() {
            // standard output belongs to the process: leave it open
        }
    }

    /** The output is complete: give it its name, or copy what a writer put in a path to standard output. */
    void commit() throws IOException {
        if (target == null) {
            if (temporary != null) {
                try (OutputStream out = standard()) {
                    Files.copy(temporary, out);
                }
            }
        } else if (!direct) {
            Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        }
        committed = true;
        close();
    }

    @Override
    public void close() {
        if (temporary == null || direct || (committed && target != null)) return;
        try {
            Files.deleteIfExists(temporary);
            if (target == null) temporary = null;
        } catch (IOException e) {
            // nothing more to do: the name says it is partial
        }
    }
}
