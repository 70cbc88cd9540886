package org.memtrace.launch;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;

/**
 * The native files shipped in the jar (the fault-mode agent, the compiled-in runtime, the gcc wrapper of
 * {@code memtrace cc}), each extracted to a directory named after its content: runs share one copy, a new
 * build never picks up a stale one, and a program linked against the runtime keeps finding the exact copy
 * its rpath names. Written to a temporary name and renamed, so a concurrent run never sees a half-written
 * file. Only a directory the user owns, mode 0700, with no one else able to replace it, is used
 * ({@link OwnedPaths}): what is extracted there is preloaded into the user's programs. Every build leaves a directory behind, so a new copy of the agent or the wrapper removes the
 * directories of older ones that no run has used for {@link #UNUSED}; a runtime's never goes, since a
 * program built against it names it in its rpath for as long as the program exists.
 */
public final class NativeFiles {
    static final String AGENT = "libmemtrace-agent.so";
    static final String RUNTIME = "libmemtrace-rt.so";
    static final String CHECK_RUNTIME = "libmemtrace-check.so";
    static final String CC_WRAPPER = "memtrace-cc-wrapper";

    /**
     * Set by the launcher of an installed memtrace to PREFIX/lib/memtrace, where {@code make install} put the
     * native files: they are used from there, never extracted, so that programs built by {@code memtrace cc}
     * name a runtime that stays where it is (docs/install.md).
     */
    public static final String LIBRARY_PROPERTY = "memtrace.lib";

    /** How long an agent's or wrapper's directory may go unused before a newer build removes it. */
    static final Duration UNUSED = Duration.ofDays(30);

    private NativeFiles() {}

    /** The LD_PRELOAD agent of fault mode. */
    public static Path agent() throws LaunchException { return extract(AGENT, "the agent library"); }

    /** The runtime every program built by {@code memtrace cc} links against. */
    public static Path runtime() throws LaunchException { return extract(RUNTIME, "the compiled-in runtime"); }

    /** The runtime programs built by {@code memtrace cc --check} link against (docs/check.md). */
    public static Path checkRuntime() throws LaunchException { return extract(CHECK_RUNTIME, "the check runtime"); }

    /** The script gcc runs its sub-programs through under {@code memtrace cc}. */
    public static Path ccWrapper() throws LaunchException { return extract(CC_WRAPPER, "the compiler wrapper"); }

    /** What this JVM extracted already: a second ask (the warm-up's, then the run's) costs a stat. */
    private static final Map<String, Path> extracted = new HashMap<>();

    private static synchronized Path extract(String resource, String what) throws LaunchException {
        String installed = System.getProperty(LIBRARY_PROPERTY);
        if (installed != null && !installed.isEmpty()) {
            Path file = Path.of(installed, resource);
            if (!Files.isRegularFile(file))
                throw LaunchException.environment(what + " is missing from the installation (" + file + "): reinstall memtrace", null);
            // what runs in every traced program must be no one else's to replace: neither the file nor its directory
            // writable by group or others (make install writes them 0755 and 0644)
            for (Path p : new Path[] {file, file.getParent()}) {
                try {
                    var perms = Files.getPosixFilePermissions(p);
                    if (perms.contains(java.nio.file.attribute.PosixFilePermission.GROUP_WRITE)
                            || perms.contains(java.nio.file.attribute.PosixFilePermission.OTHERS_WRITE))
                        throw LaunchException.environment(p + " is writable by other users: not loading " + what + " from it", null);
                } catch (java.io.IOException e) {
                    throw LaunchException.environment("cannot check " + p + ": " + e.getMessage(), e);
                }
            }
            return file;
        }
        Path done = extracted.get(resource);
        if (done != null && Files.isRegularFile(done)) return done;
        Path path = extractOnce(resource, what);
        extracted.put(resource, path);
        return path;
    }

    private static Path extractOnce(String resource, String what) throws LaunchException {
        byte[] content;
        try (InputStream in = NativeFiles.class.getResourceAsStream(resource)) {
            if (in == null) throw LaunchException.environment(what + " is missing from the build (run mvn package)", null);
            content = in.readAllBytes();
        } catch (IOException e) {
            throw LaunchException.environment("cannot read " + what + " from the jar: " + e.getMessage(), e);
        }
        String key = key(content);
        IOException first = null;
        for (Path base : candidates()) {
            try {
                Path dir = base.resolve(key);
                boolean fresh = !Files.isDirectory(dir);
                OwnedPaths.directory(base);
                Path path = install(dir, resource, content);
                Instant now = Instant.now();
                markUsed(dir, now);
                if (fresh && !resource.equals(RUNTIME) && !resource.equals(CHECK_RUNTIME)) prune(base, dir, resource, now);
                return path;
            } catch (OwnedPaths.UntrustedPathException e) {
                // not a place that cannot be written (try the next) but one someone else may have prepared
                throw LaunchException.environment("cannot extract " + what + ": " + e.getMessage(), e);
            } catch (IOException e) {
                if (first == null) first = e;
            }
        }
        throw LaunchException.environment("cannot extract " + what + ": " + first.getMessage(), first);
    }

    private static Path[] candidates() {
        Path cache = cacheDirectory(System.getenv("XDG_CACHE_HOME"), System.getProperty("user.home"));
        return new Path[] {cache.resolve("memtrace"),
                Path.of(System.getProperty("java.io.tmpdir"), "memtrace-" + System.getProperty("user.name"))};
    }

    /**
     * {@code XDG_CACHE_HOME} when it is an absolute path, else {@code ~/.cache}. A relative value is ignored, as
     * the XDG specification says and as the rewrite plans' cache does (RewriteCache): it would put the code
     * memtrace loads under whatever directory memtrace happens to be started in, perhaps another user's.
     */
    static Path cacheDirectory(String xdg, String home) {
        return xdg != null && xdg.startsWith("/") ? Path.of(xdg) : Path.of(home, ".cache");
    }

    /** {@code dir/name} with {@code content}, in a directory checked as {@link OwnedPaths} says. */
    static Path install(Path dir, String name, byte[] content) throws IOException {
        OwnedPaths.directory(dir);
        return OwnedPaths.file(dir, name, content);
    }

    /**
     * A directory's modification time is its last use: written at most once a day, since most runs only read
     * the cache, and not at all where the cache is read-only (its copy stays usable; it is just never removed).
     */
    static void markUsed(Path dir, Instant now) {
        try {
            if (Files.getLastModifiedTime(dir).toInstant().isBefore(now.minus(Duration.ofDays(1))))
                Files.setLastModifiedTime(dir, FileTime.from(now));
        } catch (IOException e) {
            // read-only cache: see above
        }
    }

    /**
     * Removes the other directories under {@code base} that hold only {@code name} and were last used before
     * {@code now - UNUSED}. A directory with anything else in it, or that cannot be read, is left; a failure
     * here never fails the run, which has its own copy already.
     */
    static void prune(Path base, Path keep, String name, Instant now) {
        Instant before = now.minus(UNUSED);
        try (var dirs = Files.list(base)) {
            for (Path dir : dirs.filter(d -> !d.equals(keep) && d.getFileName().toString().matches("[0-9a-f]{16}")).toList()) {
                try {
                    if (!Files.getLastModifiedTime(dir).toInstant().isBefore(before)) continue;
                    Path file = dir.resolve(name);
                    try (var inside = Files.list(dir)) {
                        if (!inside.toList().equals(List.of(file))) continue;
                    }
                    Files.delete(file);
                    Files.delete(dir);
                } catch (IOException e) {
                    // another run removed it first, or it is not ours to remove: leave it
                }
            }
        } catch (IOException e) {
            // the cache directory cannot be listed: nothing is removed
        }
    }

    /**
     * 64 bits of two checksums of the content: what tells one build's file from another's. Both are
     * intrinsics of the JVM from its first run; SHA-256 cost a start-up 20-40 ms more, most of it loading
     * the security providers. A clash of keys still installs the right bytes ({@link #install} compares them).
     */
    static String key(byte[] content) {
        CRC32C c = new CRC32C();
        c.update(content);
        CRC32 d = new CRC32();
        d.update(content);
        HexFormat hex = HexFormat.of();
        return hex.toHexDigits((int) c.getValue()) + hex.toHexDigits((int) d.getValue());
    }
}
