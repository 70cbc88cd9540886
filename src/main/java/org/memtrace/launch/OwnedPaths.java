package org.memtrace.launch;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Set;

/**
 * The directories memtrace loads code from (the agent it preloads, the runtime a built program maps, the
 * compiler wrapper gcc runs) and the files in them: whoever can write there runs code as the user, so every
 * one is checked after it is created, whatever was there before and whatever the umask. A directory is the
 * user's own, not a symbolic link, mode 0700 (repaired when the user owns it with a wider mode: earlier
 * versions made it 0755, or 0777 under umask 000); every directory above it is owned by the user or root
 * and writable by no one else unless sticky (so no one can rename it away between the check and the use).
 * A file is written under a fresh name created O_EXCL|O_NOFOLLOW, renamed into place and read back.
 */
final class OwnedPaths {
    private static final Set<PosixFilePermission> PRIVATE_DIR = PosixFilePermissions.fromString("rwx------");
    private static final int GROUP_OTHER_WRITE = 0022;
    private static final int STICKY = 01000;
    private static final SecureRandom RANDOM = new SecureRandom();

    private OwnedPaths() {}

    /** A place memtrace must not use: someone else could change what is loaded from it. */
    static final class UntrustedPathException extends IOException {
        UntrustedPathException(Path path, String why) {
            super(path + " " + why + "; memtrace loads code from there and will not use it (remove it, or set XDG_CACHE_HOME)");
        }
    }

    /** The effective user: /proc/self belongs to it. */
    static int uid() throws IOException {
        return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
    }

    /** Creates {@code dir} and its missing parents 0700 (not subject to the umask), then checks all of them. */
    static void directory(Path dir) throws IOException {
        Path abs = dir.toAbsolutePath().normalize();
        Path parent = abs.getParent();
        if (parent != null && !Files.exists(parent, LinkOption.NOFOLLOW_LINKS)) directory(parent);
        try {
            Files.createDirectory(abs);
            Files.setPosixFilePermissions(abs, PRIVATE_DIR);
        } catch (FileAlreadyExistsException e) {
            // someone's: checked below
        }
        int uid = uid();
        checkPrivate(abs, uid);
        int gid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:gid");
        // the real path of the parent: a symbolic link above (a /home that is a link) is the system's, not a planter's
        for (Path up = abs.getParent() == null ? null : abs.getParent().toRealPath(); up != null; up = up.getParent())
            checkAncestor(up, uid, gid);
    }

    private static void checkPrivate(Path dir, int uid) throws IOException {
        if (Files.isSymbolicLink(dir)) throw new UntrustedPathException(dir, "is a symbolic link");
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) throw new UntrustedPathException(dir, "is not a directory");
        int owner = (Integer) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        if (owner != uid) throw new UntrustedPathException(dir, "belongs to user " + owner + ", not to you (" + uid + ")");
        if ((mode(dir) & 07777) != 0700) {
            Files.setPosixFilePermissions(dir, PRIVATE_DIR);
            if ((mode(dir) & 07777) != 0700) throw new UntrustedPathException(dir, "cannot be made mode 0700");
        }
    }

    /**
     * Group write is allowed on the user's own directory whose group is the user's primary group: the
     * user-private groups of umask 002 systems leave ~/.cache 0775, and that group holds the user alone.
     */
    private static void checkAncestor(Path dir, int uid, int gid) throws IOException {
        int owner = (Integer) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        int group = (Integer) Files.getAttribute(dir, "unix:gid", LinkOption.NOFOLLOW_LINKS);
        int mode = mode(dir);
        if (owner != uid && owner != 0) throw new UntrustedPathException(dir, "belongs to user " + owner);
        if ((mode & STICKY) != 0) return;
        boolean ownGroup = owner == uid && group == gid;
        if ((mode & 0002) != 0 || ((mode & 0020) != 0 && !ownGroup))
            throw new UntrustedPathException(dir, "is writable by others (mode " + Integer.toOctalString(mode & 07777) + ")");
    }

    private static int mode(Path path) throws IOException {
        return (Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
    }

    /**
     * {@code dir/name} holding exactly {@code content}, executable by the user alone: the copy there when it is
     * the user's own regular file with that content and writable by no one else, otherwise a new one.
     */
    static Path file(Path dir, String name, byte[] content) throws IOException {
        Path target = dir.resolve(name);
        if (isOwnCopy(target, content)) return target;
        Path tmp = dir.resolve(".extract-" + HexFormat.of().toHexDigits(RANDOM.nextLong()) + ".tmp");
        try {
            try (SeekableByteChannel out = Files.newByteChannel(tmp, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS), PosixFilePermissions.asFileAttribute(PRIVATE_DIR))) {
                ByteBuffer b = ByteBuffer.wrap(content);
                while (b.hasRemaining()) out.write(b);
            }
            Files.setPosixFilePermissions(tmp, PRIVATE_DIR);
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
        if (!isOwnCopy(target, content)) throw new UntrustedPathException(target, "changed under memtrace while it was written");
        return target;
    }

    private static boolean isOwnCopy(Path file, byte[] content) throws IOException {
        try {
            if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) return false;
            if ((Integer) Files.getAttribute(file, "unix:uid", LinkOption.NOFOLLOW_LINKS) != uid()) return false;
            if ((mode(file) & GROUP_OTHER_WRITE) != 0) return false;
            return Arrays.equals(Files.readAllBytes(file), content);
        } catch (NoSuchFileException e) {
            return false;
        }
    }
}
