package org.memtrace.mtr;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compiles a C probe against the runtime's definition of the .mtr file (agent/include/mt_file.h) and its
 * checksum code (agent/runtime/rt_crc.c): every size, offset, magic and version must be the Java reader's,
 * and every checksum the runtime computes (by the SSE4.2 instruction and by its table) java.util.zip.CRC32C's.
 */
class MtrLayoutProbeTest {

    @Test
    void theRuntimesLayoutAndChecksumsAreTheReaders(@TempDir Path dir) throws Exception {
        Path source = dir.resolve("mtr_probe.c");
        try (InputStream in = getClass().getResourceAsStream("mtr_probe.c")) {
            assertThat(in).as("probe source on the test class path").isNotNull();
            Files.copy(in, source);
        }
        Path binary = dir.resolve("mtr_probe");
        Path agent = Path.of("agent").toAbsolutePath();
        run(dir, "gcc", "-O2", "-std=gnu11", "-D_GNU_SOURCE", "-I", agent.resolve("include").toString(), "-I",
                agent.resolve("common").toString(), "-I", agent.resolve("runtime").toString(), "-o", binary.toString(),
                source.toString());
        Map<String, Long> probed = parse(run(dir, binary.toString()));

        Map<String, Long> layout = Map.ofEntries(
                Map.entry("HEADER_SIZE", (long) MtrFile.HEADER_SIZE),
                Map.entry("HEADER_CRC_OFFSET", (long) MtrFile.HEADER_CRC_OFFSET),
                Map.entry("VERSION_UNCHECKED", (long) MtrFile.VERSION_UNCHECKED),
                Map.entry("VERSION_CHECKED", (long) MtrFile.VERSION_CHECKED),
                Map.entry("VERSION", (long) MtrFile.VERSION),
                Map.entry("CHUNK_MAGIC", (long) MtrFile.CHUNK_MAGIC),
                Map.entry("END_MAGIC", (long) MtrFile.END_MAGIC),
                Map.entry("CHUNK_HEADER_SIZE", (long) MtrFile.CHUNK_HEADER_SIZE),
                Map.entry("CHUNK_PAYLOAD_CRC_OFFSET", (long) MtrFile.CHUNK_PAYLOAD_CRC_OFFSET),
                Map.entry("CHUNK_HEADER_CRC_OFFSET", (long) MtrFile.CHUNK_HEADER_CRC_OFFSET),
                Map.entry("END_SIZE", (long) MtrFile.END_SIZE),
                Map.entry("END_CRC_OFFSET", (long) MtrFile.END_CRC_OFFSET));
        assertThat(probed).containsAllEntriesOf(layout);

        byte[] data = new byte[1000];
        for (int i = 0; i < data.length; i++) data[i] = (byte) (i * 7 + 3);
        int checked = 0;
        for (Map.Entry<String, Long> e : probed.entrySet()) {
            if (!e.getKey().startsWith("crc_")) continue;
            int n = Integer.parseInt(e.getKey().split("_")[2]);
            CRC32C crc = new CRC32C();
            crc.update(data, 0, n);
            assertThat(e.getValue()).as(e.getKey()).isEqualTo(crc.getValue());
            checked++;
        }
        assertThat(checked).as("checksums probed (the table's at least)").isGreaterThanOrEqualTo(28 * 3);
    }

    private static Map<String, Long> parse(String output) {
        var m = new HashMap<String, Long>();
        for (String line : output.split("\n")) {
            String[] kv = line.trim().split(" ");
            if (kv.length == 2) m.put(kv[0], Long.parseLong(kv[1]));
        }
        return m;
    }

    private static String run(Path dir, String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("%s failed:%n%s", command[0], out).isZero();
        return out;
    }
}
