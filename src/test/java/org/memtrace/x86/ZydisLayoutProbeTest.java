package org.memtrace.x86;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Compiles a C probe against the installed Zydis headers: it checks the agent's C mirror of the ABI
 * (agent/zydis_abi.h) when it compiles, and prints every constant the Java binding uses for comparison.
 */
class ZydisLayoutProbeTest {

    @Test
    void everyOffsetSizeAndConstantMatchesTheHeaders(@TempDir Path dir) throws Exception {
        Path source = dir.resolve("zydis_probe.c");
        try (InputStream in = getClass().getResourceAsStream("zydis_probe.c")) {
            assertThat(in).as("probe source on the test class path").isNotNull();
            Files.copy(in, source);
        }
        Path binary = dir.resolve("zydis_probe");
        Path agentSources = Path.of("agent").toAbsolutePath();
        run(dir, "gcc", "-O0", "-I", agentSources.toString(), "-o", binary.toString(), source.toString(), "-lZydis");
        Map<String, Long> probed = parse(run(dir, binary.toString()));

        Map<String, Long> expected = ZydisLayout.layoutFacts();
        assertThat(probed).containsAllEntriesOf(expected);
    }

    private static Map<String, Long> parse(String output) {
        var m = new HashMap<String, Long>();
        for (String line : output.split("\n")) {
            String[] kv = line.trim().split(" ");
            if (kv.length == 2) {
                m.put(kv[0], Long.parseLong(kv[1]));
            }
        }
        return m;
    }

    private static String run(Path dir, String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("%s failed (is libzydis-dev installed?):%n%s", command[0], out).isZero();
        return out;
    }
}
