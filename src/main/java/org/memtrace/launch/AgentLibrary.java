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
 * The agent shared object shipped in the jar, extracted to a directory named after its content so runs
 * share one copy and a new build never picks up a stale one. Written to a temporary name and renamed, so
 * a concurrent run never preloads a half-written library.
 */
public final class AgentLibrary {
    static final String RESOURCE = "libmemtrace-agent.so";

    private AgentLibrary() {}

    public static Path extract() throws LaunchException {
        byte[] so;
        try (InputStream in = AgentLibrary.class.getResourceAsStream(RESOURCE)) {
            if (in == null) throw LaunchException.environment("the agent library is missing from the build (run mvn package)", null);
            so = in.readAllBytes();
        } catch (IOException e) {
            throw LaunchException.environment("cannot read the agent library from the jar: " + e.getMessage(), e);
        }
        String key = HexFormat.of().formatHex(sha256(so), 0, 8);
        IOException first = null;
        for (Path base : candidates()) {
            try {
                return install(base.resolve(key), so);
            } catch (IOException e) {
                if (first == null) first = e;
            }
        }
        throw LaunchException.environment("cannot extract the agent library: " + first.getMessage(), first);
    }

    private static Path[] candidates() {
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path cache = xdg != null && !xdg.isEmpty() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return new Path[] {cache.resolve("memtrace"),
                Path.of(System.getProperty("java.io.tmpdir"), "memtrace-" + System.getProperty("user.name"))};
    }

    static Path install(Path dir, byte[] so) throws IOException {
        Path target = dir.resolve(RESOURCE);
        if (Files.isRegularFile(target) && Arrays.equals(Files.readAllBytes(target), so)) return target;
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, ".agent-", ".tmp", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        try {
            Files.write(tmp, so);
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
