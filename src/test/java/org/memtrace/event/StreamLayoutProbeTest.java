package org.memtrace.event;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compiles a C probe against the agent's and runtime's definition of the event stream
 * (agent/include/memtrace_stream.h): every constant it prints must be {@link StreamLayout}'s field of that
 * name, so the header the C side writes and the one the Java side reads cannot drift apart.
 */
class StreamLayoutProbeTest {
    @Test
    void theAgentsStreamConstantsAreTheReaders(@TempDir Path dir) throws Exception {
        Path source = dir.resolve("stream_probe.c");
        try (InputStream in = getClass().getResourceAsStream("stream_probe.c")) {
            assertThat(in).as("probe source on the test class path").isNotNull();
            Files.copy(in, source);
        }
        Path binary = dir.resolve("stream_probe");
        Path include = Path.of("agent", "include").toAbsolutePath();
        run(dir, "gcc", "-O2", "-std=gnu11", "-Wall", "-Werror", "-I", include.toString(), "-o", binary.toString(), source.toString());

        Map<String, Long> probed = new LinkedHashMap<>();
        for (String line : run(dir, binary.toString()).split("\n")) {
            String[] kv = line.strip().split(" ");
            if (kv.length == 2) probed.put(kv[0], Long.parseUnsignedLong(kv[1]));
        }
        assertThat(probed).as("constants probed").hasSize(44);
        Map<String, Long> java = new LinkedHashMap<>();
        for (String name : probed.keySet()) {
            var field = StreamLayout.class.getField(name);
            assertThat(Modifier.isStatic(field.getModifiers())).as(name).isTrue();
            java.put(name, ((Number) field.get(null)).longValue());
        }
        assertThat(java).isEqualTo(probed);
    }

    private static String run(Path dir, String... command) throws Exception {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("%s failed:%n%s", command[0], out).isZero();
        return out;
    }
}
