package org.memtrace.launch;

import static org.assertj.core.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NativeFilesTest {
    @TempDir Path dir;

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
}
