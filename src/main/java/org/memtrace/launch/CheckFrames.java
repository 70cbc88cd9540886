package org.memtrace.launch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import org.memtrace.rewrite.FrameTable;

/**
 * {@code memtrace run --check}'s table of the executable's stack variables, source lines and inlined calls
 * ({@link FrameTable}), handed to the fault-mode agent (agent/check_locals.c), or in rewrite mode to the check
 * runtime (agent/check/check_stackvars.c), as a file whose path is {@code MEMTRACE_CHECK_FRAMES}: created afresh
 * (O_EXCL, 0600, a random name next to the event ring) and deleted when the run ends; the agent opens it with
 * O_NOFOLLOW and checks every count against its size. An executable without DWARF, or one that cannot be read,
 * gets no file: the run is checked as before.
 */
final class CheckFrames {
    private CheckFrames() {}

    /** The table's file for {@code executable}, read now, or null when it has no stack variables nor lines to give. */
    static Path write(Path executable, Path dir) { return write(FrameTable.of(executable), dir); }

    /** The file of {@code table} (a cold check plan's, made from the DWARF the plan read), or null when it is empty. */
    static Path write(FrameTable table, Path dir) {
        if (table.bytes() == null) return null;
        Path file = null;
        try {
            file = Files.createTempFile(dir, "memtrace-", ".frames",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.write(file, table.bytes(), StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING, LinkOption.NOFOLLOW_LINKS);
            return file;
        } catch (IOException e) {
            if (file != null) Processes.deleteQuietly(file);
            return null;
        }
    }
}
