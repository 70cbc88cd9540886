package org.memtrace.launch;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * The native files shipped in the jar (the fault-mode agent, the compiled-in runtime, the gcc wrapper of
 * {@code memtrace cc}), each extracted to a directory named after its content: runs share one copy, a new
 * build never picks up a stale one, and a program linked against the runtime keeps finding the exact copy
 * its rpath names. Written to a temporary name and renamed, so a concurrent run never sees a half-written
 * file.
 */
public final class NativeFiles {
    static final String AGENT = "libmemtrace-agent.so";
    static final String RUNTIME = "libmemtrace-rt.so";
    static final String CC_WRAPPER = "memtrace-cc-wrapper";

    private NativeFiles() {}

    /** The LD_PRELOAD agent of fault mode. */
    public static Path agent() throws LaunchException { return extract(AGENT, "the agent library"); }

    /** The runtime every program built by {@code memtrace cc} links against. */
    public static Path runtime() throws LaunchException { return extract(RUNTIME, "the compiled-in runtime"); }

    /** The script gcc runs its sub-programs through under {@code memtrace cc}. */
    public static Path ccWrapper() throws LaunchException { return extract(CC_WRAPPER, "the compiler wrapper"); }

    private static Path extract(String resource, String what) throws LaunchException {
        byte[] content;
        try (InputStream in = NativeFiles.class.getResourceAsStream(resource)) {
            if (in == null) throw LaunchException.environment(what + " is missing from the build (run mvn package)", null);
            content = in.readAllBytes();
        } catch (IOException e) {
            throw LaunchException.environment("cannot read " + what + " from the jar: " + e.getMessage(), e);
        }
        String key = HexFormat.of().formatHex(sha256(content), 0, 8);
        IOException first = null;
        for (Path base : candidates()) {
            try {
                return install(base.resolve(key), resource, content);
            } catch (IOException e) {
                if (first == null) first = e;
            }
        }
        throw LaunchException.environment("cannot extract " + what + ": " + first.getMessage(), first);
    }

    private static Path[] candidates() {
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path cache = xdg != null && !xdg.isEmpty() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return new Path[] {cache.resolve("memtrace"),
                Path.of(System.getProperty("java.io.tmpdir"), "memtrace-" + System.getProperty("user.name"))};
    }

    static Path install(Path dir, String name, byte[] content) throws IOException {
        Path target = dir.resolve(name);
        if (Files.isRegularFile(target) && Arrays.equals(Files.readAllBytes(target), content)) return target;
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, ".extract-", ".tmp", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        try {
            Files.write(tmp, content);
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
        return target;
    }

    private static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
