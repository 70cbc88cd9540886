package org.memtrace.cc;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;

/**
 * What a compile server leaves in the socket directory when it ends idle: the client (scripts/cc-client.sh)
 * starts each server with its output appended to {@code cc-KEY.log} beside {@code cc-KEY.sock}, so every
 * build of memtrace (every key) left an empty log behind, and a killed server its socket. An ending server
 * removes its own log when empty, then the sockets that nothing listens on and the empty logs without a
 * socket that are old enough not to belong to a server still starting. Nothing here is worth a failure.
 */
final class SocketDirectory {
    /** Longer than any server's start (a JVM, a second or so under load): younger logs may be a starting one's. */
    static final Duration STARTING = Duration.ofMinutes(10);

    private SocketDirectory() {}

    static void tidy(Path ownSocket) {
        try {
            deleteIfEmpty(log(ownSocket));
            Path dir = ownSocket.getParent();
            try (DirectoryStream<Path> sockets = Files.newDirectoryStream(dir, "cc-*.sock")) {
                for (Path s : sockets) if (!s.equals(ownSocket)) removeIfDead(s);
            }
            Instant old = Instant.now().minus(STARTING);
            try (DirectoryStream<Path> logs = Files.newDirectoryStream(dir, "cc-*.log")) {
                for (Path l : logs) {
                    if (Files.exists(socketOf(l), LinkOption.NOFOLLOW_LINKS)) continue;
                    BasicFileAttributes a = Files.readAttributes(l, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                    if (a.isRegularFile() && a.size() == 0 && a.lastModifiedTime().compareTo(FileTime.from(old)) < 0) Files.delete(l);
                }
            }
        } catch (IOException | RuntimeException e) {
            // a leftover costs a directory entry, not a build
        }
    }

    static Path log(Path socket) {
        String n = socket.getFileName().toString();
        return socket.resolveSibling(n.substring(0, n.length() - ".sock".length()) + ".log");
    }

    private static Path socketOf(Path log) {
        String n = log.getFileName().toString();
        return log.resolveSibling(n.substring(0, n.length() - ".log".length()) + ".sock");
    }

    private static void deleteIfEmpty(Path file) throws IOException {
        try {
            BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (a.isRegularFile() && a.size() == 0) Files.delete(file);
        } catch (NoSuchFileException e) {
            // started by hand or by a test, without a log
        }
    }

    /**
     * Deletes a socket whose connect is refused, only if it is still the same file afterwards: a new server
     * renames its socket onto the path in one step, and that one must stay.
     */
    private static void removeIfDead(Path socket) throws IOException {
        Object before = key(socket);
        if (before == null) return;
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(socket));
            return; // a server answers
        } catch (IOException refused) {
            // nothing listens
        }
        if (before.equals(key(socket))) Files.deleteIfExists(socket);
    }

    private static Object key(Path p) throws IOException {
        try {
            BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            return a.isOther() ? a.fileKey() : null;
        } catch (NoSuchFileException e) {
            return null;
        }
    }
}
