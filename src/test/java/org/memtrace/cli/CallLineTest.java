package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;

/**
 * call_line.c compiled by a relative path ({@code gcc -g call_line.c} in build/) and traced and simulated from
 * another directory (elsewhere/): a memset's and a memcpy's misses are charged to the calls' own lines, not
 * to the lines after them (a block's ip is the call's return address, looked up one byte before), and the
 * annotated source is read from the compilation directory without --source-dir.
 */
class CallLineTest {
    @TempDir static Path dir;
    static Path elsewhere;
    static JsonNode sim;

    @BeforeAll
    static void simulate() throws Exception {
        Path build = Files.createDirectories(dir.resolve("build"));
        elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
        Files.copy(Path.of("src/test/resources/c/call_line.c"), build.resolve("call_line.c"));
        Process gcc = new ProcessBuilder("gcc", "-O0", "-g", "-fno-builtin", "-o", "call_line", "call_line.c")
                .directory(build.toFile()).redirectErrorStream(true).start();
        String out = new String(gcc.getInputStream().readAllBytes());
        assertThat(gcc.waitFor()).as(out).isZero();
        Cli.Result r = Cli.run(elsewhere, "run", "--mode", "fault", "-q", "-o", "/dev/null", "--save-stream", "s.stream", "--", "../build/call_line");
        assertThat(r.status()).as(r.stderr()).isZero();
        r = Cli.run(elsewhere, "cachesim", "s.stream", "--lines", "--annotate", "--json", "sim.json");
        assertThat(r.status()).as(r.stderr()).isZero();
        sim = new ObjectMapper().readTree(elsewhere.resolve("sim.json").toFile());
    }

    /** The fixture's line that carries {@code marker}. */
    private static int line(String marker) throws Exception {
        List<String> lines = Files.readAllLines(Path.of("src/test/resources/c/call_line.c"));
        for (int i = 0; i < lines.size(); i++) if (lines.get(i).contains("marker: " + marker)) return i + 1;
        throw new AssertionError(marker);
    }

    @Test
    void blockOperationsAreChargedToTheLinesOfTheirCalls() throws Exception {
        Map<String, Long> misses = new LinkedHashMap<>();
        for (JsonNode l : sim.get("linesByFirstLevelMisses")) {
            if (l.get("name").asText().startsWith("call_line.c:")) misses.put(l.get("name").asText(), l.get("firstLevel").asLong());
        }
        // 64 KiB in 64-byte lines: memset's 1,024 stores, memcpy's 1,024 loads and 1,024 stores, each a miss
        assertThat(misses).containsExactlyInAnyOrderEntriesOf(Map.of(
                "call_line.c:" + line("memset"), 1024L, "call_line.c:" + line("memcpy"), 2048L,
                "call_line.c:" + line("after"), 1L, "call_line.c:" + (line("after") + 1), 1L));
    }

    @Test
    void theSourceIsReadFromTheCompilationDirectoryFromAnywhere() throws Exception {
        JsonNode file = sim.get("annotatedSource").get(0);
        assertThat(file.get("path").asText()).isEqualTo("call_line.c");
        assertThat(file.get("problem").isNull()).isTrue();
        JsonNode chunk = file.get("chunks").get(0);
        int memcpy = line("memcpy");
        assertThat(chunk.get("text").get(memcpy - chunk.get("first").asInt()).asText()).contains("memcpy(dst, src, sizeof dst);");
        assertThat(chunk.get("counts").get(String.valueOf(memcpy))).extracting(JsonNode::asLong)
                .containsExactly(1024L, 1024L, 1024L, 1024L, 1024L, 1024L);
    }

    /** The CSV's source column names a block's call line (its instruction stays the return address the trace names). */
    @Test
    void theExportsSourceColumnNamesTheCallsLine() throws Exception {
        Cli.Result r = Cli.run(elsewhere, "convert", "s.stream", "--to", "csv", "-o", "s.csv");
        assertThat(r.status()).as(r.stderr()).isZero();
        List<String> copies = Files.readAllLines(elsewhere.resolve("s.csv")).stream().filter(l -> l.contains(",Y,")).toList();
        assertThat(copies).hasSize(2).allSatisfy(l -> assertThat(l).endsWith(",call_line.c:" + line("memcpy")));
        List<String> stores = Files.readAllLines(elsewhere.resolve("s.csv")).stream().filter(l -> l.contains(",W,")).toList();
        assertThat(stores).hasSize(1).allSatisfy(l -> assertThat(l).endsWith(",call_line.c:" + line("memset")));
    }

    /** The report's annotated source, written from another directory, reads the file without --source-dir. */
    @Test
    void theReportShowsTheSourceFromAnywhere() throws Exception {
        Cli.Result r = Cli.run(elsewhere, "report", "s.stream", "-o", "r.html");
        assertThat(r.status()).as(r.stderr()).isZero();
        String html = Files.readString(elsewhere.resolve("r.html"));
        int start = html.indexOf("const DATA = ") + "const DATA = ".length();
        JsonNode file = new ObjectMapper().readTree(html.substring(start, html.indexOf('\n', start)).replaceAll(";\\s*$", ""))
                .get("cache").get("files").get(0);
        assertThat(file.get("path").asText()).isEqualTo("call_line.c");
        assertThat(file.get("problem").isNull()).isTrue();
    }
}
