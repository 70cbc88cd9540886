package org.memtrace.rewrite;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The directory of rewrite plans: {@code $XDG_CACHE_HOME/memtrace/rewrite} (else {@code ~/.cache/…}),
 * made by memtrace with mode 0700. The runtime executes what a plan says, so a directory memtrace did not
 * make, or one another user could write to, is refused.
 */
public final class RewriteCache {
    private RewriteCache() {}

    public static Path directory() throws RewriteException {
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path root = xdg != null && xdg.startsWith("/") ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return checked(root.resolve("memtrace").resolve("rewrite"));
    }

    /** {@code dir}, made if missing (0700), refused unless it is a real directory of this user that nobody else can write. */
    static Path checked(Path dir) throws RewriteException {
        try {
            if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectories(dir.getParent());
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            }
            if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS))
                throw new RewriteException(dir + " is not a directory memtrace made for its rewrite plans");
            String owner = Files.getOwner(dir, LinkOption.NOFOLLOW_LINKS).getName();
            Set<PosixFilePermission> modes = Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS);
            if (!owner.equals(System.getProperty("user.name")) || modes.contains(PosixFilePermission.GROUP_WRITE)
                    || modes.contains(PosixFilePermission.OTHERS_WRITE))
                throw new RewriteException(dir + " belongs to " + owner + " or others can write to it: refused for rewrite plans");
            return dir;
        } catch (IOException e) {
            throw new RewriteException("cannot make the rewrite cache " + dir + ": " + e.getMessage());
        }
    }
}
