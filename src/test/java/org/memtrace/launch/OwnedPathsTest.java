package org.memtrace.launch;

import static org.assertj.core.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where memtrace extracts what it preloads or executes (issue 26, "Load only what memtrace owns"): another
 * user's directory, a symbolic link, a directory anyone may write above it, or a file someone else left
 * there is never used. The tests run as root; "another user" is nobody (65534).
 */
class OwnedPathsTest {
    private static final int NOBODY = 65534;
    private static final byte[] CONTENT = {0x7f, 'E', 'L', 'F', 1, 2, 3};

    @TempDir Path dir;

    @BeforeAll
    static void runsAsRoot() throws Exception {
        assertThat(OwnedPaths.uid()).as("chown to another user needs root").isZero();
    }

    private static int mode(Path p) throws Exception {
        return (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777;
    }

    @Test
    void aDirectoryAnotherUserCreatedFirstIsRefused() throws Exception {
        Path planted = Files.createDirectory(dir.resolve("0123456789abcdef"));
        Files.setPosixFilePermissions(planted, PosixFilePermissions.fromString("rwxrwxrwx"));
        Files.setAttribute(planted, "unix:uid", NOBODY);
        assertThatThrownBy(() -> NativeFiles.install(planted, "libmemtrace-agent.so", CONTENT))
                .isInstanceOf(OwnedPaths.UntrustedPathException.class).hasMessageContaining("belongs to user 65534");
        assertThat(planted.resolve("libmemtrace-agent.so")).doesNotExist();
    }

    @Test
    void aSymbolicLinkInPlaceOfTheDirectoryIsRefused() throws Exception {
        Path elsewhere = Files.createDirectory(dir.resolve("elsewhere"));
        Path link = Files.createSymbolicLink(dir.resolve("0123456789abcdef"), elsewhere);
        assertThatThrownBy(() -> NativeFiles.install(link, "libmemtrace-agent.so", CONTENT))
                .isInstanceOf(OwnedPaths.UntrustedPathException.class).hasMessageContaining("symbolic link");
        assertThat(elsewhere.resolve("libmemtrace-agent.so")).doesNotExist();
    }

    @Test
    void aDirectoryOthersMayWriteAboveItIsRefused() throws Exception {
        Path open = Files.createDirectory(dir.resolve("open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx")); // not sticky: anyone may rename
        assertThatThrownBy(() -> NativeFiles.install(open.resolve("memtrace").resolve("0123456789abcdef"), "lib.so", CONTENT))
                .isInstanceOf(OwnedPaths.UntrustedPathException.class).hasMessageContaining("writable by others (mode 777)");
    }

    @Test
    void aDirectoryAboveWritableByAnotherGroupIsRefusedButByTheUsersOwnGroupIsNot() throws Exception {
        Path shared = Files.createDirectory(dir.resolve("shared"));
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxr-x"));
        Files.setAttribute(shared, "unix:gid", NOBODY); // nogroup: not the user's own group
        assertThatThrownBy(() -> NativeFiles.install(shared.resolve("0123456789abcdef"), "lib.so", CONTENT))
                .isInstanceOf(OwnedPaths.UntrustedPathException.class).hasMessageContaining("writable by others (mode 775)");
        Files.setAttribute(shared, "unix:gid", (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:gid"));
        assertThat(NativeFiles.install(shared.resolve("0123456789abcdef"), "lib.so", CONTENT)).exists(); // a user-private group
    }

    @Test
    void theUsersOwnWideDirectoriesAreMadePrivateAndNewOnesAre0700() throws Exception {
        Path wide = Files.createDirectory(dir.resolve("memtrace"));
        Files.setPosixFilePermissions(wide, PosixFilePermissions.fromString("rwxr-xr-x")); // as earlier versions left it
        Path key = wide.resolve("0123456789abcdef").resolve("deeper");
        OwnedPaths.directory(wide); // NativeFiles checks its cache directory before the one under it
        Path file = NativeFiles.install(key, "lib.so", CONTENT);
        assertThat(mode(wide)).isEqualTo(0700);
        assertThat(mode(key)).isEqualTo(0700);
        assertThat(mode(key.getParent())).isEqualTo(0700);
        assertThat(mode(file)).isEqualTo(0700);
        assertThat(Files.readAllBytes(file)).isEqualTo(CONTENT);
    }

    @Test
    void aFileWithTheRightBytesThatSomeoneElseOwnsIsReplacedNotUsed() throws Exception {
        Path key = dir.resolve("0123456789abcdef");
        Path file = NativeFiles.install(key, "lib.so", CONTENT);
        Files.setAttribute(file, "unix:uid", NOBODY); // its owner may change it after memtrace compared it
        assertThat(NativeFiles.install(key, "lib.so", CONTENT)).isEqualTo(file);
        assertThat((Integer) Files.getAttribute(file, "unix:uid", LinkOption.NOFOLLOW_LINKS)).isZero();

        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxrwxrwx"));
        NativeFiles.install(key, "lib.so", CONTENT);
        assertThat(mode(file)).isEqualTo(0700);

        Files.delete(file);
        Path target = Files.write(dir.resolve("target"), CONTENT);
        Files.createSymbolicLink(file, target);
        NativeFiles.install(key, "lib.so", CONTENT);
        assertThat(Files.isSymbolicLink(file)).as("the link is replaced by a file of memtrace's own").isFalse();
        try (var left = Files.list(key)) {
            assertThat(left).containsExactly(file); // no temporary file left behind
        }
    }
}
