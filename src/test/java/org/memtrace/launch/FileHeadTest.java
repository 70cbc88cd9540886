package org.memtrace.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileHeadTest {
    @TempDir Path dir;

    @Test
    void givesTheFirstBytesOrFewerAndKeepsThePosition() throws Exception {
        Path f = Files.write(dir.resolve("f"), new byte[] {1, 2, 3, 4, 5, 6});
        try (FileChannel ch = FileChannel.open(f)) {
            ch.position(3);
            assertThat(FileHead.of(ch, 4)).containsExactly(1, 2, 3, 4);
            assertThat(FileHead.of(ch, 10)).containsExactly(1, 2, 3, 4, 5, 6);
            assertThat(ch.position()).isEqualTo(3);
        }
        try (FileChannel ch = FileChannel.open(Files.createFile(dir.resolve("empty")))) {
            assertThat(FileHead.of(ch, 8)).isEmpty();
        }
    }
}
