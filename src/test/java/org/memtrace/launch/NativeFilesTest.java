package org.memtrace.launch;

import static org.assertj.core.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NativeFilesTest {
    @TempDir Path dir;

    /**
     * A relative XDG_CACHE_HOME (set by a careless or hostile parent) is ignored, as the XDG specification says:
     * it named a directory under wherever memtrace was started (as root, a user's project directory), where the
     * agent would have been extracted and loaded from.
     */
    @Test
    void aRelativeXdgCacheHomeIsIgnored() {
        assertThat(NativeFiles.cacheDirectory("cache", "/home/u")).isEqualTo(Path.of("/home/u/.cache"));
        assertThat(NativeFiles.cacheDirectory("./x/../cache", "/home/u")).isEqualTo(Path.of("/home/u/.cache"));
        assertThat(NativeFiles.cacheDirectory("", "/home/u")).isEqualTo(Path.of("/home/u/.cache"));
        assertThat(NativeFiles.cacheDirectory(null, "/home/u")).isEqualTo(Path.of("/home/u/.cache"));
        assertThat(NativeFiles.cacheDirectory("/var/cache/u", "/home/u")).isEqualTo(Path.of("/var/cache/u"));
    }

    @Test
    void extractsTheBuiltAgentToADirectoryNamedAfterItsContent() throws Exception {
        Path so = NativeFiles.agent();
        assertThat(so.getFileName().toString()).isEqualTo("libmemtrace-agent.so");
        assertThat(so.getParent().getFileName().toString()).matches("[0-9a-f]{16}");
        assertThat(Files.isExecutable(so)).isTrue();
        assertThat(Files.readAllBytes(so)).startsWith(0x7f, 'E', 'L', 'F');
        assertThat(NativeFiles.agent()).isEqualTo(so);
    }

    @Test
    void reusesAnIdenticalCopyAndReplacesADifferentOne() throws Exception {
        Path first = NativeFiles.install(dir, "lib.so", new byte[] {1, 2, 3});
        assertThat(first).isEqualTo(dir.resolve("lib.so"));
        Files.setLastModifiedTime(first, FileTime.fromMillis(0));
        assertThat(NativeFiles.install(dir, "lib.so", new byte[] {1, 2, 3})).isEqualTo(first);
        assertThat(Files.getLastModifiedTime(first).toMillis()).isZero();
        NativeFiles.install(dir, "lib.so", new byte[] {4, 5});
        assertThat(Files.readAllBytes(first)).containsExactly(4, 5);
        try (var files = Files.list(dir)) {
            assertThat(files).containsExactly(first); // no temporary file left behind
        }
    }

    @Test
    void aNewBuildRemovesOnlyOlderUnusedCopiesOfTheSameFile() throws Exception {
        Instant now = Instant.parse("2026-11-24T00:00:00Z");
        FileTime old = FileTime.from(now.minus(NativeFiles.UNUSED).minus(Duration.ofHours(1)));
        Path keep = dir.resolve("00000000000000aa");
        NativeFiles.install(keep, "libmemtrace-agent.so", new byte[] {1});
        Path stale = dir.resolve("00000000000000bb");
        NativeFiles.install(stale, "libmemtrace-agent.so", new byte[] {2});
        Path recent = dir.resolve("00000000000000cc");
        NativeFiles.install(recent, "libmemtrace-agent.so", new byte[] {3});
        Path runtime = dir.resolve("00000000000000dd");
        NativeFiles.install(runtime, "libmemtrace-rt.so", new byte[] {4});
        Path mixed = dir.resolve("00000000000000ee");
        NativeFiles.install(mixed, "libmemtrace-agent.so", new byte[] {5});
        Files.writeString(mixed.resolve("notes"), "a user's file");
        Path other = dir.resolve("not-a-build");
        NativeFiles.install(other, "libmemtrace-agent.so", new byte[] {6});
        for (Path d : new Path[] {keep, stale, runtime, mixed, other}) Files.setLastModifiedTime(d, old);
        Files.setLastModifiedTime(recent, FileTime.from(now.minus(Duration.ofDays(2))));

        NativeFiles.prune(dir, keep, "libmemtrace-agent.so", now);

        assertThat(stale).doesNotExist();
        assertThat(keep.resolve("libmemtrace-agent.so")).exists();
        assertThat(recent.resolve("libmemtrace-agent.so")).exists();
        assertThat(runtime.resolve("libmemtrace-rt.so")).exists(); // another file: a linked program's rpath
        assertThat(mixed.resolve("libmemtrace-agent.so")).exists(); // not only ours
        assertThat(other.resolve("libmemtrace-agent.so")).exists(); // not a build's name
    }

    @Test
    void aRunMarksItsCopyUsedAtMostOnceADay() throws Exception {
        Instant now = Instant.parse("2026-11-24T00:00:00Z");
        NativeFiles.install(dir, "lib.so", new byte[] {1});
        FileTime hourAgo = FileTime.from(now.minus(Duration.ofHours(1)));
        Files.setLastModifiedTime(dir, hourAgo);
        NativeFiles.markUsed(dir, now);
        assertThat(Files.getLastModifiedTime(dir)).isEqualTo(hourAgo);
        Files.setLastModifiedTime(dir, FileTime.from(now.minus(Duration.ofDays(3))));
        NativeFiles.markUsed(dir, now);
        assertThat(Files.getLastModifiedTime(dir).toInstant()).isEqualTo(now);
    }
}
