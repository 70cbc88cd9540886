package org.memtrace.rewrite;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The directory of rewrite plans: {@code $XDG_CACHE_HOME/memtrace/rewrite} (else {@code ~/.cache/…}),
 * made by memtrace with mode 0700. The runtime executes what a plan says, so a directory memtrace did not
 * make, or one another user could write to, is refused.
 *
 * <p>Plans are keyed by the module's contents (a SHA-256 of its bytes and of what the plan is for); hashing
 * libc anew on every run cost a warm start-up tens of milliseconds of CPU, so the key of a module is
 * remembered in the directory too ({@link #contentKey}), under the module's identity as {@code stat} gives it
 * (device, inode, size, modification and change times, path). Writing a file changes its change time, which no
 * user can set back, so a remembered key stands only for the bytes it was computed from; a key is remembered
 * only for a file last changed more than {@link #SETTLED_NS} before it was read (a write within the same clock
 * tick as the hash could otherwise keep its time). A wrong plan could still not be applied: the runtime checks
 * the bytes under every jump it writes.
 */
public final class RewriteCache {
    /** How long ago a module must have last changed for its key to be remembered (timestamps are coarse). */
    static final long SETTLED_NS = 2_000_000_000L;
    private static final Pattern KEY = Pattern.compile("[0-9a-f]{64}");

    private RewriteCache() {}

    /** What {@link #contentKey} computes from a module's bytes when it does not remember them. */
    @FunctionalInterface
    interface Hasher {
        String key(byte[] image);
    }

    /**
     * The content key of {@code module} for plans salted with {@code salt} (the planner's version and the
     * plan's choice): remembered in {@code cache} (a directory {@link #checked} made) from an earlier run when
     * the module's identity is unchanged, else {@code hasher}'s over its bytes, then remembered.
     * {@code image} is filled with the bytes when they were read (null when the key was remembered).
     */
    static String contentKey(Path module, String salt, Path cache, Hasher hasher, byte[][] image) throws IOException {
        Map<String, Object> st = Files.readAttributes(module, "unix:dev,ino,size,lastModifiedTime,ctime");
        String identity = salt + "\0" + module.toAbsolutePath() + "\0" + st.get("dev") + ":" + st.get("ino") + ":" + st.get("size") + ":"
                + nanos(st.get("lastModifiedTime")) + ":" + nanos(st.get("ctime"));
        // named by a 64-bit hash of the identity, which the file holds whole: a warm start loads no message digest
        Path memo = cache.resolve(String.format("%016x.key", fnv(identity)));
        if (Files.isRegularFile(memo, LinkOption.NOFOLLOW_LINKS)) {
            String[] known = Files.readString(memo, StandardCharsets.UTF_8).split("\n", -1);
            if (known.length == 3 && known[0].equals(identity) && KEY.matcher(known[1]).matches()) return known[1];
        }
        byte[] bytes = Files.readAllBytes(module);
        image[0] = bytes;
        String key = hasher.key(bytes);
        long now = System.currentTimeMillis() * 1_000_000L;
        Map<String, Object> after = Files.readAttributes(module, "unix:ino,size,ctime");
        if (now - nanos(st.get("ctime")) > SETTLED_NS && after.get("ino").equals(st.get("ino")) && after.get("size").equals(st.get("size"))
                && nanos(after.get("ctime")) == nanos(st.get("ctime")) && bytes.length == ((Number) st.get("size")).longValue()) {
            Path temporary = Files.createTempFile(cache, "key-", ".tmp");
            try {
                Files.writeString(temporary, identity + "\n" + key + "\n", StandardCharsets.UTF_8);
                Files.move(temporary, memo, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                // the cache's own directory: cannot happen; the key is only not remembered
            } finally {
                Files.deleteIfExists(temporary);
            }
        }
        return key;
    }

    static String sha256(byte[]... parts) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            for (byte[] p : parts) sha.update(p);
            return HexFormat.of().formatHex(sha.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e); // every JDK has SHA-256
        }
    }

    /** FNV-1a, 64 bits, of the string's UTF-16 units. */
    private static long fnv(String s) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < s.length(); i++) {
            h ^= s.charAt(i);
            h *= 0x100000001b3L;
        }
        return h;
    }

    private static long nanos(Object time) {
        FileTime t = (FileTime) time;
        return t.to(java.util.concurrent.TimeUnit.NANOSECONDS);
    }

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
